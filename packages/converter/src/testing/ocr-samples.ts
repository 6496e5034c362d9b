/**
 * OCR test material (issue 12): a known sentence per OCR language, rendered as a scanned
 * line of text with an installed Noto font through Pango (libvips' text renderer in
 * sharp), which shapes Arabic joining forms and Devanagari conjuncts as a printer would;
 * and the character error rate that scores the OCR against the sentence.
 */
import sharp from 'sharp';

/** One language's sample: its tesseract code, the sentence, the font, the CER allowed. */
export interface OcrSample {
  readonly code: string;
  readonly sentence: string;
  readonly font: string;
  /** Highest character error rate the test accepts (measured + margin, see the test). */
  readonly maxCer: number;
}

/** The 12 OCR languages' samples. */
export const OCR_SAMPLES: readonly OcrSample[] = [
  { code: 'eng', sentence: 'The quick brown fox jumps over the lazy dog near the river bank.', font: 'Noto Sans', maxCer: 0.05 },
  { code: 'deu', sentence: 'Falsches Üben von Xylophonmusik quält jeden größeren Zwerg.', font: 'Noto Sans', maxCer: 0.05 },
  { code: 'fra', sentence: 'Le vieux château se trouve près de la forêt où nous étions hier.', font: 'Noto Sans', maxCer: 0.05 },
  { code: 'spa', sentence: 'El pingüino Wenceslao hizo kilómetros bajo exhaustiva lluvia y frío.', font: 'Noto Sans', maxCer: 0.05 },
  { code: 'ita', sentence: 'La città è molto bella e la gente è sempre gentile con più turisti.', font: 'Noto Sans', maxCer: 0.05 },
  { code: 'por', sentence: 'À noite, vovô Kowalsky vê o ímã cair no pé do pinguim queixoso.', font: 'Noto Sans', maxCer: 0.05 },
  { code: 'nld', sentence: 'Pa\'s wijze lynx bezag vroom het fikse aquaduct bij de brug.', font: 'Noto Sans', maxCer: 0.05 },
  { code: 'rus', sentence: 'Съешь же ещё этих мягких французских булок, да выпей чаю.', font: 'Noto Sans', maxCer: 0.05 },
  { code: 'chi_sim', sentence: '我们今天在北京学习中文，天气很好。', font: 'Noto Sans CJK SC', maxCer: 0.1 },
  { code: 'jpn', sentence: '今日は東京で日本語を勉強しています。', font: 'Noto Sans CJK JP', maxCer: 0.1 },
  { code: 'ara', sentence: 'مرحبا بالعالم، هذه جملة قصيرة للاختبار.', font: 'Noto Naskh Arabic', maxCer: 0.15 },
  { code: 'hin', sentence: 'यह एक छोटा वाक्य है जो परीक्षण के लिए लिखा गया है।', font: 'Noto Sans Devanagari', maxCer: 0.15 },
];

function escapeMarkup(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Renders `sentence` as black text on a white page at 300 dpi (a 12 pt line, as a scanner
 * would see a printed page: skewed by 0.6° and slightly blurred), with a white margin, as
 * a greyscale PNG.
 */
export async function renderSentence(sample: OcrSample, output: string): Promise<void> {
  const text = await sharp({
    text: { text: `<span font_family="${sample.font}" font_size="12pt">${escapeMarkup(sample.sentence)}</span>`, dpi: 300, rgba: false },
  }).negate({ alpha: false }).png().toBuffer();
  // sharp applies extend before negate within one pipeline: two pipelines keep the margin white.
  await sharp(text)
    .extend({ top: 120, bottom: 120, left: 120, right: 120, background: '#ffffff' })
    .greyscale()
    // A scanner's touch: the line a little skewed and softened.
    .rotate(0.6, { background: '#ffffff' })
    .blur(0.6)
    .withMetadata({ density: 300 })
    .png()
    .toFile(output);
}

/** Levenshtein distance between two code-point sequences. */
export function levenshtein(a: readonly string[], b: readonly string[]): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length] as number;
}

/**
 * Character error rate of `ocr` against `truth`: edit distance over the truth's length, on
 * NFC code points with whitespace and bidi marks removed (tesseract puts spaces between CJK
 * characters and line breaks where it likes, pdftotext wraps right-to-left runs in
 * embedding marks; none of them is a reading error).
 */
export function characterErrorRate(truth: string, ocr: string): number {
  const norm = (s: string): string[] => [...s.normalize('NFC').replace(/[\s\u200e\u200f\u202a-\u202e\u2066-\u2069]+/gu, '')];
  const t = norm(truth);
  return t.length ? levenshtein(t, norm(ocr)) / t.length : 0;
}

/**
 * Order-free character error rate: the share of the truth's characters (whitespace and
 * bidi marks removed) missing from `ocr`, as multisets. For right-to-left text layers,
 * which pdftotext reassembles from word boxes by position (it splits and reorders Arabic
 * words even when tesseract's own text is right).
 */
export function characterBagErrorRate(truth: string, ocr: string): number {
  const norm = (s: string): string[] => [...s.normalize('NFC').replace(/[\s\u200e\u200f\u202a-\u202e\u2066-\u2069]+/gu, '')];
  const bag = new Map<string, number>();
  for (const c of norm(ocr)) bag.set(c, (bag.get(c) ?? 0) + 1);
  const t = norm(truth);
  let missing = 0;
  for (const c of t) {
    const n = bag.get(c) ?? 0;
    if (n > 0) bag.set(c, n - 1);
    else missing++;
  }
  return t.length ? missing / t.length : 0;
}
