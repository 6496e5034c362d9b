import { Type } from 'typebox';
import { DateTime, NO_NUL, Nullable, StringEnum } from '@mailconv/platform';
import { CONVERSION_STATUSES } from '../repositories/conversions.repository.js';

const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$', description: 'Lowercase hex SHA-256, computed while the bytes streamed.' });

/** `POST /api/v1/upload` answer (convert-decisions.md item 4). */
export const UploadAnswer = Type.Object({
  success: Type.Boolean(),
  upload_id: Type.String({ description: '`upl_…`' }),
  filename: Type.String({ description: 'The client’s file name, without folders.' }),
  format: Type.String({ description: 'Detected from the bytes (an extension from GET /api/v1/formats).' }),
  mime_type: Type.String(),
  size_bytes: Type.Integer(),
  sha256: Sha256,
  expires_at: DateTime({ description: 'When the upload is removed unless shredded sooner.' }),
  source_url: Type.Optional(Type.String({ description: 'Extension: the address the file was fetched from (after redirects), for an upload imported from a URL.' })),
});

/** Request headers a URL import may not set: the fetch's own framing and routing. */
export const FORBIDDEN_FETCH_HEADERS = ['host', 'content-length', 'transfer-encoding', 'connection', 'upgrade', 'te', 'trailer', 'keep-alive', 'expect', 'accept-encoding', 'proxy-authorization', 'proxy-connection', 'cookie2'];

/** `POST /api/v1/upload` JSON body (extension, issue 24): a file imported from a URL. */
export const UploadUrlBody = Type.Object(
  {
    url: Type.String({
      maxLength: 2048,
      pattern: NO_NUL,
      description:
        'An http(s) URL to fetch and keep as an upload, through the egress guard: public addresses only (loopback, private, link-local, CGNAT, multicast, reserved and ' +
        'cloud-metadata ranges refused in every spelling), DNS answers pinned, redirects re-checked, the plan’s max_file_bytes and a time-out as caps. ' +
        'A refused address → 400 naming `url`; no answer, a time-out or a non-2xx answer → 422 fetch_failed.',
    }),
    filename: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: NO_NUL, description: 'The upload’s name (its extension helps detection); default the answer’s Content-Disposition name, else the URL’s last segment.' })),
    headers: Type.Optional(
      Type.Record(Type.String({ pattern: '^[A-Za-z0-9-]{1,64}$' }), Type.String({ maxLength: 4096, pattern: '^[^\\r\\n\\u0000]*$' }), {
        maxProperties: 20,
        description: `Request headers for the fetch (e.g. Authorization), sent to the URL’s own origin only — never to a redirect elsewhere — and never stored or logged. Not: ${FORBIDDEN_FETCH_HEADERS.join(', ')}.`,
      }),
    ),
  },
  { additionalProperties: false },
);

const ACTIVE_CONTENT =
  'Extension (not in the contract): PDF targets only. true removes active content from the output — JavaScript, ' +
  'launch and URI actions (with the annotations that carry them), embedded files, open actions — by re-distilling it with Ghostscript; images are kept lossless.';

const COMPRESSION =
  'Extension (not in the contract): PDF targets only. Ghostscript distiller level: screen (images at 72 dpi), ebook (150), printer (300), prepress (300, colour-managed); the compress preset is ebook.';
const WEBHOOK_URL =
  'Extension (issue 24): also tell this URL when the conversion completes or fails (`conversion.completed` / `conversion.failed`), besides the account’s endpoints. ' +
  'Checked like an endpoint’s URL (public HTTPS unless the operator allows otherwise; refused → 400 naming `webhook_url`) and signed with the account’s request signing secret ' +
  '(POST /api/dashboard/webhooks/request-secret; without one → 400).';
const ROTATE = 'Extension (not in the contract): PDF targets only. Turns every page clockwise by 90, 180 or 270 degrees (-90 means 270), losslessly (qpdf).';
const WATERMARK = 'Extension (not in the contract): PDF targets only. 1–100 printable ASCII characters stamped diagonally, grey and half-transparent, across every page (Ghostscript).';

const PASSWORD =
  'Extension (not in the contract): PDF sources only. The password that opens an encrypted PDF; the output is not encrypted (unless set_password). Without it an encrypted PDF is 422 password_required. Never answered back.';
const SET_PASSWORD =
  'Extension (not in the contract): PDF targets only. The output is encrypted with AES-256 and needs this password to open. 1–128 characters without control characters. Never answered back.';

const SPLIT =
  'Extension (not in the contract): PDF and image targets. true delivers one file per page in a zip (application/zip; page-1.pdf … or page-1.png …, the numbers padded to one width): a PDF target is cut after the other PDF operations; an image target of a paged source (PDF, documents, sheets, slides) renders every page of page_range. output.pages counts them. Cannot be combined with max_output_bytes.';

const PHOTO_METADATA_TEXT =
  'Extension (issue 31): picture outputs (jpg, png, webp, tiff, avif, heic, jxl of a picture source): the source\'s EXIF, XMP and IPTC — camera, lens, exposure, dates, author, copyright, descriptions — copied by exiftool. keep leaves out the location (GPS and place names); keep_location copies it too; strip (the default) copies nothing. Never copied: the orientation (the pixels are turned upright), the colour profile (the pixels are converted), the size, thumbnails and previews. Any other pair, or with split → 400 naming photo_metadata.';
const FRAME =
  'Extension (issue 31): the frame (1 = the first) a still output (jpg, png, tiff, pdf, …) shows of an animated gif, webp, avif, jxl or apng source; absent: the first. Past the last frame → 400 naming frame when the conversion runs; gif, webp, apng and avif targets keep the animation (400); other pairs → 400.';
const BATCH =
  'Extension (issue 24): an archive source (zip, 7z, tar, tgz, tbz2, txz, cpio, iso) whose files are each converted to target_format, with the other options applied to each file. ' +
  'The output is a zip of the converted files (same folders, the target’s extension; a name taken twice gets " (2)") and a manifest.json listing every file: source, source_format, source_size_bytes, source_sha256, status (completed or failed), output, format, size_bytes, sha256, error {code, message}. ' +
  'One unit of quota per file, charged when the job is accepted (429 quota_exceeded when the month has fewer left); files that fail are refunded when it completes, all of them when it fails or is shredded before it finishes. ' +
  'Refused before any charge (422 conversion_failed): archives holding links, special files, no file, more than 100 files, or past the archive bomb limits. Archiver metadata (__MACOSX/, .DS_Store, ._*, Thumbs.db, desktop.ini) is skipped. ' +
  'The job fails when no file converts. output.files counts them.';

const EXPORT =
  'Extension (issue 24): upload the output, once made, to S3-compatible storage (AWS S3, MinIO, R2, Ceph, …) with the AWS SDK — multipart past one part. ' +
  'The record answers its status and ETag; the credentials are sealed with the service’s key until the export ran, then removed, and never answered. ' +
  'The endpoint goes through the egress guard (public https only unless the operator allows otherwise: 400 naming export.endpoint). ' +
  'A failed export leaves the conversion completed (and charged) with export.status failed and its error; the output stays downloadable.';
const ExportRequest = Type.Object(
  {
    bucket: Type.String({ minLength: 3, maxLength: 63, description: 'The bucket (S3 naming: lower-case letters, digits, dots, hyphens).' }),
    access_key_id: Type.String({ minLength: 1, maxLength: 256, description: 'Never answered or logged.' }),
    secret_access_key: Type.String({ minLength: 1, maxLength: 256, format: 'password', description: 'Never answered or logged.' }),
    session_token: Type.Optional(Type.String({ maxLength: 4096, format: 'password', description: 'Temporary credentials’ token. Never answered or logged.' })),
    endpoint: Type.Optional(Type.String({ maxLength: 2048, description: 'The store’s address, e.g. https://minio.example.com:9000 (no path). Absent: AWS S3 in region.' })),
    region: Type.Optional(Type.String({ maxLength: 40, description: 'Default us-east-1.' })),
    key: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'The object key template (default "{id}/{filename}"): {id}, {filename}, {stem}, {ext}, {date} (YYYY-MM-DD of the request).' })),
    force_path_style: Type.Optional(Type.Boolean({ description: 'Path-style addressing (endpoint/bucket/key). Default true with an endpoint, false for AWS (bucket.host).' })),
  },
  { additionalProperties: false, description: EXPORT },
);

const BROWSER = 'Extension (issue 22): pages rendered by Chromium only (html, md, zipped sites and svg → pdf, png, jpg, webp; an SVG takes css, wait_for, media and device_scale); any other pair is a 400 naming the field.';

const METADATA = (field: string) =>
  `Extension (issue 22): PDF targets. The document's ${field} (1–300 characters), written into its information dictionary and XMP metadata (pikepdf); kept by the archive preset's PDF/A.`;
const PAPER = `${BROWSER} PDF: A3, A4 (the default), A5, Letter, Legal, Tabloid, or width x height like 210mmx297mm (mm, cm, in, px). Wins over the page's own CSS @page size.`;
const MARGIN = `${BROWSER} PDF: 1–4 lengths as in CSS (top right bottom left), e.g. "10mm" or "20mm 15mm"; units mm, cm, in, px. Default: the page's own (none), 20 mm top and bottom with a header or footer.`;
const HEADER = `${BROWSER} PDF: HTML of at most 8,192 characters printed at the top (header_html) or bottom (footer_html) of every page; elements with class pageNumber, totalPages, date, title or url are filled in. Styles must be inline; it loads nothing (images as data: URLs).`;
const pageOptionFields = {
  paper: Type.Optional(Type.String({ maxLength: 40, description: PAPER })),
  landscape: Type.Optional(Type.Boolean({ description: `${BROWSER} PDF: print in landscape.` })),
  margin: Type.Optional(Type.String({ maxLength: 60, description: MARGIN })),
  scale: Type.Optional(Type.Number({ minimum: 0.1, maximum: 2, description: `${BROWSER} PDF: zoom of the printed page, 0.1–2 (1).` })),
  print_background: Type.Optional(Type.Boolean({ description: `${BROWSER} PDF: print backgrounds and colours (default true).` })),
  prefer_css_page_size: Type.Optional(Type.Boolean({ description: `${BROWSER} PDF: use the page's CSS @page size (default true unless paper is given).` })),
  header_html: Type.Optional(Type.String({ maxLength: 8192, description: HEADER })),
  footer_html: Type.Optional(Type.String({ maxLength: 8192, description: HEADER })),
  media: Type.Optional(StringEnum(['print', 'screen'], { description: `${BROWSER} The CSS media the page is laid out for (default print for PDF, screen for images).` })),
  wait_for: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: `${BROWSER} A CSS selector waited for after the page loaded (a chart drawn by a script), within the conversion time-out; never appearing fails the conversion.` })),
  single_page: Type.Optional(Type.Boolean({ description: `${BROWSER} PDF: one page as tall as the document (cannot be combined with paper).` })),
  viewport_width: Type.Optional(Type.Integer({ minimum: 320, maximum: 3840, description: `${BROWSER} Images: the window width in CSS pixels (1280); the picture is the whole page at that width (at most 16,384 high).` })),
  device_scale: Type.Optional(Type.Number({ minimum: 1, maximum: 3, description: `${BROWSER} Images: device pixels per CSS pixel, 1–3 (1): 2 makes a picture twice as wide and tall.` })),
  css: Type.Optional(Type.String({ maxLength: 65536, description: `${BROWSER} (md sources too) A stylesheet of at most 65,536 characters applied after the page's own (after the default Markdown stylesheet for md). It loads nothing from outside either.` })),
};

const VIDEO = 'Extension (issue 31): video sources (mp4, mov, webm, mkv, avi, 3gp, …) converted to gif, webp, apng (animations) or jpg, png (one still frame); any other pair is a 400 naming the field.';
const VIDEO_DESCRIPTIONS = {
  start: `${VIDEO} Seconds into the clip where the animation starts, or of the still (default: the animation from 0; a still is the most representative frame of the first 3 s). At or past the clip's end → 400 naming start.`,
  duration: `${VIDEO} Animations: seconds of the clip from start (default 10, at most 60).`,
  fps: `${VIDEO} Animations: frames per second (default 12).`,
  width: `${VIDEO} Most pixels wide, the aspect kept, never enlarged (animations default 480; stills keep the displayed size).`,
  loop: `${VIDEO} Animations: 0 loops forever (default); n plays the animation n times in all.`,
  animated: `${VIDEO} gif, webp and apng targets are animations (default true); false makes one still frame.`,
};
const videoOptionFields = {
  start: Type.Optional(Type.Number({ minimum: 0, maximum: 86400, description: VIDEO_DESCRIPTIONS.start })),
  duration: Type.Optional(Type.Number({ minimum: 0.01, maximum: 60, description: VIDEO_DESCRIPTIONS.duration })),
  fps: Type.Optional(Type.Integer({ minimum: 1, maximum: 30, description: VIDEO_DESCRIPTIONS.fps })),
  width: Type.Optional(Type.Integer({ minimum: 16, maximum: 1920, description: VIDEO_DESCRIPTIONS.width })),
  loop: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535, description: VIDEO_DESCRIPTIONS.loop })),
  animated: Type.Optional(Type.Boolean({ description: VIDEO_DESCRIPTIONS.animated })),
};

// Extensions (issue 25): PDF forms, metadata and images (docs/convert-api.md, "PDF forms, metadata and images").
const FORMS = 'Extension (issue 25): PDF targets only.';
const FORM_DATA =
  `${FORMS} Fills the source PDF's AcroForm: {"<full field name>": value} — text → a string; check box → true/false (or its on-state name); ` +
  'radio → the chosen option’s export value (false: none); combo box or list → one of its options; multi-select list → a list of options. ' +
  'Field names, types and options are listed by converting the PDF to json. Checked against the PDF before anything is charged: unknown names → 400 naming them ' +
  '(field form_data); a value its field cannot take → 400 naming the field (form_data.<name>). The values are drawn into the fields, so every viewer shows them.';
const FLATTEN = `${FORMS} true: form fields and annotations become page content (after form_data, in the same request); no field remains.`;
const PDF_METADATA =
  `${FORMS} Written to the information dictionary and the XMP together: title, author, subject, keywords (a string or a list), creator, producer, created, modified ` +
  '(ISO 8601; a time without a zone is UTC). metadata.title with the title option (or .author with author) → 400.';
const FormValue = Type.Union([Type.String({ maxLength: 10000 }), Type.Boolean(), Type.Array(Type.String({ maxLength: 10000 }), { minItems: 1, maxItems: 500 })]);
const MetadataText = Type.String({ minLength: 1, maxLength: 1000 });
const PdfMetadataObject = Type.Object(
  {
    title: Type.Optional(MetadataText),
    author: Type.Optional(MetadataText),
    subject: Type.Optional(MetadataText),
    keywords: Type.Optional(Type.Union([MetadataText, Type.Array(MetadataText, { minItems: 1, maxItems: 100 })])),
    creator: Type.Optional(MetadataText),
    producer: Type.Optional(MetadataText),
    created: Type.Optional(Type.String({ description: 'ISO 8601 date or date-time.' })),
    modified: Type.Optional(Type.String({ description: 'ISO 8601 date or date-time.' })),
  },
  { additionalProperties: false, description: PDF_METADATA },
);
const pdfFormOptionFields = {
  form_data: Type.Optional(Type.Object({}, { additionalProperties: FormValue, maxProperties: 1000, description: FORM_DATA })),
  flatten: Type.Optional(Type.Boolean({ description: FLATTEN })),
  metadata: Type.Optional(PdfMetadataObject),
};
const pdfFormMultipartFields = {
  form_data: { type: 'string', maxLength: 1048576, description: `${FORM_DATA} In a form: the object as JSON text.` },
  flatten: { type: 'boolean', description: FLATTEN },
  metadata: { type: 'string', maxLength: 16384, description: `${PDF_METADATA} In a form: the object as JSON text.` },
};
const pdfFormRecordFields = {
  form_data: Type.Optional(Type.Array(Type.String(), { description: 'Extension (issue 25): the names of the fields filled, present when form_data was given; never their values (they are in the output only).' })),
  flatten: Type.Optional(Type.Literal(true, { description: 'Extension (issue 25): present (true) when the PDF was flattened.' })),
  metadata: Type.Optional(PdfMetadataObject),
};

// Extension (issue 25): PAdES signatures (`sign`), one block.
const SIGN =
  'Extension (issue 25): PDF targets. A PAdES baseline B-B signature (ETSI.CAdES.detached, SHA-256), the last PDF operation: true, or an object. ' +
  'certificate: "operator" (default; the service’s own certificate, 400 naming sign when none is configured) or the id of one of your signing certificates (POST /api/v1/signing-certificates). ' +
  'visible (false): a box with "Digitally signed by <name>", the date, reason and location; page (1; -1 = last); x, y, width, height in points from the top-left of the page as displayed (default 200×60 at the bottom-right, 36 pt from the edges). ' +
  'reason, location, contact: 1–200 characters. A PDF source that is only signed keeps its bytes (earlier signatures stay valid). Cannot be combined with set_password, split or batch. In a form: true or the object as JSON text.';
const SignRequest = Type.Object(
  {
    certificate: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: '"operator" (default) or one of your signing certificates’ ids.' })),
    visible: Type.Optional(Type.Boolean()),
    page: Type.Optional(Type.Integer({ minimum: -1, description: '1-based; -1 = the last page.' })),
    x: Type.Optional(Type.Number({ minimum: 0, maximum: 14400 })),
    y: Type.Optional(Type.Number({ minimum: 0, maximum: 14400 })),
    width: Type.Optional(Type.Number({ minimum: 40, maximum: 14400 })),
    height: Type.Optional(Type.Number({ minimum: 20, maximum: 14400 })),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    location: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    contact: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);
const signOptionField = { sign: Type.Optional(Type.Union([Type.Boolean(), SignRequest], { description: SIGN })) };
const signRecordField = {
  sign: Type.Optional(Type.Object({ signed: Type.Literal(true), subject: Type.String({ description: 'The signing certificate’s subject.' }) }, { description: 'Extension (issue 25): present when the PDF was asked to be signed; never the certificate’s id or key.' })),
};

const PDF_ARCHIVE = 'Extension (issue 25): PDF targets.';
const PDF_ARCHIVE_DESCRIPTIONS = {
  pdfa: `${PDF_ARCHIVE} PDF/A part 1, 2 or 3, level B: LibreOffice writes it for documents, sheets and slides (its part 1 is level A, which meets B), Ghostscript for any other PDF (part 1: PDF 1.4; a PDF with transparency → 422, ask for 2b or 3b). Wins over the archive preset's 2b; with set_password or split → 400 naming that option.`,
  pdf_ua: `${PDF_ARCHIVE} Tagged PDF/UA-1 of documents, sheets and slides LibreOffice converts (docx, doc, odt, rtf, txt, xlsx, xls, ods, csv, pptx, ppt, odp, …; any other source → 400 naming pdf_ua), its title shown in the window: the title option, else the document's own (none → 422 asking for title). Combines with pdfa; not with options that rewrite the pages (page_range, split, quality, compression, max_output_bytes, watermark, remove_active_content, presets other than archive and linearize → 400 naming the option).`,
  language: `${PDF_ARCHIVE} With pdf_ua: the document's language as a BCP 47 tag such as "en-GB" (the PDF's /Lang); default the document's own.`,
};
const pdfArchiveFields = {
  pdfa: Type.Optional(StringEnum(['1b', '2b', '3b'], { description: PDF_ARCHIVE_DESCRIPTIONS.pdfa })),
  pdf_ua: Type.Optional(Type.Boolean({ description: PDF_ARCHIVE_DESCRIPTIONS.pdf_ua })),
  language: Type.Optional(Type.String({ minLength: 2, maxLength: 35, description: PDF_ARCHIVE_DESCRIPTIONS.language })),
};

// Extensions (issue 25): redaction and page marks on PDF outputs (one block: pdf-markup-options.ts in the converter).
const MARKUP = 'Extension (issue 25): PDF targets only.';
const POSITION6 = ['top-left', 'top-center', 'top-right', 'bottom-left', 'bottom-center', 'bottom-right'];
const MARKUP_DESCRIPTIONS = {
  redact:
    `${MARKUP} PDF sources only. True redaction: the text under the boxes is removed from the file, image pixels under them blanked and the image data rewritten, ` +
    'vector paths meeting them removed whole; then the information dictionary and XMP metadata, embedded files, JavaScript and the annotations and links over the boxes are removed and the file rewritten without its history. ' +
    'areas: boxes in points, origin at the top-left of the page as displayed (a page past the last → 400 naming redact.areas); text: up to 100 strings (every match, case-insensitive unless match_case); ' +
    'regex: a regular expression (≤ 500 characters; no back-references, look-arounds or repeated groups holding a repetition or alternation; matched line by line). At least one of the three. fill: the box colour (#000000). In a form: JSON text.',
  page_numbers: `${MARKUP} true, or {format ("{page}"; tokens {page} {pages}), position (bottom-center), font_size (10, 6–72), start (1), pages ("1-"), margin (24 points)}: Helvetica, upright as the page is displayed. In a form: JSON text or "true".`,
  bates: `${MARKUP} {prefix (""), suffix (""), start (1), digits (6, 1–12), position (bottom-right), font_size (10)}: prefix + zero-padded number + suffix on every page in order. In a form: JSON text.`,
  stamps:
    `${MARKUP} Up to 10 stamps, each exactly one of text (≤ 200 Latin-1 characters; tokens {page} {pages} {date}) and image (base64 PNG or JPEG ≤ 1 MB, ≤ 4096×4096 pixels; width in points, default its pixels at 96 dpi), ` +
    'with pages ("1-"), position (center), font_size (36), color ("#cc0000"), opacity (1), rotation (degrees counter-clockwise, -180–180), margin (24). In a form: JSON text (at most 4096 bytes: larger images go in a JSON body).',
  header: `${MARKUP} A line of at most 200 Latin-1 characters centred 24 points from the top of every page, Helvetica 10 pt; tokens {page} {pages} {date} {title}.`,
  footer: `${MARKUP} A line of at most 200 Latin-1 characters centred 24 points from the bottom of every page, Helvetica 10 pt; tokens {page} {pages} {date} {title}.`,
};
const MarkPosition = StringEnum(POSITION6);
const markupOptionFields = {
  redact: Type.Optional(
    Type.Object(
      {
        areas: Type.Optional(
          Type.Array(
            Type.Object({ page: Type.Integer({ minimum: 1 }), x: Type.Number({ minimum: 0 }), y: Type.Number({ minimum: 0 }), width: Type.Number({ minimum: 0.01, maximum: 100000 }), height: Type.Number({ minimum: 0.01, maximum: 100000 }) }, { additionalProperties: false }),
            { maxItems: 1000 },
          ),
        ),
        text: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 100 })),
        regex: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
        match_case: Type.Optional(Type.Boolean()),
        fill: Type.Optional(Type.String({ pattern: '^#[0-9a-fA-F]{6}$' })),
      },
      { additionalProperties: false, description: MARKUP_DESCRIPTIONS.redact },
    ),
  ),
  page_numbers: Type.Optional(
    Type.Union(
      [
        Type.Boolean(),
        Type.Object(
          {
            format: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            position: Type.Optional(MarkPosition),
            font_size: Type.Optional(Type.Number({ minimum: 6, maximum: 72 })),
            start: Type.Optional(Type.Integer({ minimum: 0 })),
            pages: Type.Optional(Type.String()),
            margin: Type.Optional(Type.Number({ minimum: 0, maximum: 200 })),
          },
          { additionalProperties: false },
        ),
      ],
      { description: MARKUP_DESCRIPTIONS.page_numbers },
    ),
  ),
  bates: Type.Optional(
    Type.Object(
      {
        prefix: Type.Optional(Type.String({ maxLength: 50 })),
        suffix: Type.Optional(Type.String({ maxLength: 50 })),
        start: Type.Optional(Type.Integer({ minimum: 0 })),
        digits: Type.Optional(Type.Integer({ minimum: 1, maximum: 12 })),
        position: Type.Optional(MarkPosition),
        font_size: Type.Optional(Type.Number({ minimum: 6, maximum: 72 })),
      },
      { additionalProperties: false, description: MARKUP_DESCRIPTIONS.bates },
    ),
  ),
  stamps: Type.Optional(
    Type.Array(
      Type.Object(
        {
          text: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          image: Type.Optional(Type.String({ description: 'Base64 PNG or JPEG.' })),
          width: Type.Optional(Type.Number({ minimum: 1, maximum: 14400 })),
          pages: Type.Optional(Type.String()),
          position: Type.Optional(StringEnum(['center', ...POSITION6])),
          font_size: Type.Optional(Type.Number({ minimum: 6, maximum: 200 })),
          color: Type.Optional(Type.String({ pattern: '^#[0-9a-fA-F]{6}$' })),
          opacity: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
          rotation: Type.Optional(Type.Number({ minimum: -180, maximum: 180 })),
          margin: Type.Optional(Type.Number({ minimum: 0, maximum: 200 })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 10, description: MARKUP_DESCRIPTIONS.stamps },
    ),
  ),
  header: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: MARKUP_DESCRIPTIONS.header })),
  footer: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: MARKUP_DESCRIPTIONS.footer })),
};
/** A stamp as the record answers it: an image by its SHA-256 and size. */
const StampRecord = Type.Object({
  text: Type.Optional(Type.String()),
  image_sha256: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
  image_bytes: Type.Optional(Type.Integer({ minimum: 1 })),
  width: Type.Optional(Type.Number()),
  pages: Type.String(),
  position: StringEnum(['center', ...POSITION6]),
  font_size: Type.Number(),
  color: Type.String(),
  opacity: Type.Number(),
  rotation: Type.Number(),
  margin: Type.Number(),
});
const markupFormFields = Object.fromEntries(Object.entries(MARKUP_DESCRIPTIONS).map(([k, description]) => [k, { type: 'string', maxLength: 4096, description }]));

const optionFields = {
  preset: Type.Optional(Type.String({ description: 'A preset listed by GET /api/v1/formats (web, print, thumbnail, ebook, archive — for PDF sources too, by Ghostscript; for PDF targets also compress, linearize, grayscale) that applies to the target.' })),
  quality: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Images, lossy audio/video, PDF compression.' })),
  page_range: Type.Optional(Type.String({ description: '1-based pages of paged sources, e.g. "1-3,5,8-".' })),
  ocr_language: Type.Optional(Type.String({ description: 'OCR languages joined with "+": eng, deu, fra, spa, ita, por, nld, rus, chi_sim, jpn, ara, hin (or two-letter codes).' })),
  max_output_bytes: Type.Optional(Type.Integer({ minimum: 1, description: 'The output must not be larger; quality is lowered where the engine can, else output_too_large.' })),
  remove_active_content: Type.Optional(Type.Boolean({ description: ACTIVE_CONTENT })),
  compression: Type.Optional(StringEnum(['screen', 'ebook', 'printer', 'prepress'], { description: COMPRESSION })),
  rotate: Type.Optional(Type.Integer({ description: ROTATE })),
  watermark: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: WATERMARK })),
  password: Type.Optional(Type.String({ minLength: 1, maxLength: 128, format: 'password', description: PASSWORD })),
  set_password: Type.Optional(Type.String({ minLength: 1, maxLength: 128, format: 'password', description: SET_PASSWORD })),
  split: Type.Optional(Type.Boolean({ description: SPLIT })),
  batch: Type.Optional(Type.Boolean({ description: BATCH })),
  photo_metadata: Type.Optional(StringEnum(['strip', 'keep', 'keep_location'], { description: PHOTO_METADATA_TEXT })),
  frame: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000, description: FRAME })),
  title: Type.Optional(Type.String({ minLength: 1, maxLength: 300, description: METADATA('title') })),
  author: Type.Optional(Type.String({ minLength: 1, maxLength: 300, description: METADATA('author') })),
  ...pageOptionFields,
  ...videoOptionFields,
  ...pdfFormOptionFields,
  ...signOptionField,
  ...pdfArchiveFields,
  ...markupOptionFields,
  webhook_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, pattern: NO_NUL, description: WEBHOOK_URL })),
  export: Type.Optional(ExportRequest),
};

/** `POST /api/v1/convert` JSON body. */
export const ConvertJsonBody = Type.Object(
  {
    upload_id: Type.Optional(Type.String({ pattern: NO_NUL, description: 'From POST /api/v1/upload. Exactly one of upload_id and url.' })),
    url: Type.Optional(
      Type.String({
        maxLength: 2048,
        pattern: NO_NUL,
        description:
          'Extension: an http(s) URL to fetch and convert instead of an upload (exactly one of upload_id and url). Fetched through the egress guard: ' +
          'public addresses only (loopback, private, link-local, CGNAT, multicast, reserved and cloud-metadata ranges refused in every spelling), DNS answers pinned, ' +
          'redirects re-checked, the plan’s max_file_bytes and a time-out as caps. An HTML page is rendered at its address, its stylesheets, images, fonts and ' +
          'scripts fetched through the same guard. A refused address → 400 naming `url`; no answer, a time-out or a non-2xx answer → 422 fetch_failed.',
      }),
    ),
    target_format: Type.String({ description: 'An extension listed by GET /api/v1/formats/{ext}/targets for the upload’s format.' }),
    ...optionFields,
  },
  { additionalProperties: false },
);

/** Most uploads one merge takes. */
export const MAX_MERGE_UPLOADS = 50;

/** `POST /api/v1/merge` JSON body (extension). */
export const MergeJsonBody = Type.Object(
  {
    upload_ids: Type.Array(Type.String(), {
      minItems: 2,
      maxItems: MAX_MERGE_UPLOADS,
      description: `Two to ${MAX_MERGE_UPLOADS} of the caller’s uploads (from POST /api/v1/upload), merged in this order: PDFs as they are, any other upload that converts to PDF (documents, slides, sheets, images, HTML, Markdown, …) converted to PDF first.`,
    }),
    ...optionFields,
  },
  { additionalProperties: false },
);

/**
 * Multipart bodies: the handler reads the parts as a stream (so `nullable` lets the unparsed
 * body through the route's validation), then checks the fields it collected against this
 * same schema (`formChecker`), text values coerced.
 */
export const MultipartBody = Type.Unsafe({
  type: 'object',
  nullable: true,
  required: ['file', 'target_format'],
  properties: {
    file: { type: 'string', format: 'binary', description: 'The source file (streamed; over the plan’s max_file_bytes → 413 file_too_large).' },
    target_format: { type: 'string' },
    preset: { type: 'string' },
    quality: { type: 'integer', minimum: 1, maximum: 100 },
    page_range: { type: 'string' },
    ocr_language: { type: 'string' },
    max_output_bytes: { type: 'integer', minimum: 1 },
    remove_active_content: { type: 'boolean', description: ACTIVE_CONTENT },
    compression: { type: 'string', enum: ['screen', 'ebook', 'printer', 'prepress'], description: COMPRESSION },
    rotate: { type: 'integer', description: ROTATE },
    watermark: { type: 'string', minLength: 1, maxLength: 100, description: WATERMARK },
    password: { type: 'string', minLength: 1, maxLength: 128, format: 'password', description: PASSWORD },
    set_password: { type: 'string', minLength: 1, maxLength: 128, format: 'password', description: SET_PASSWORD },
    split: { type: 'boolean', description: SPLIT },
    batch: { type: 'boolean', description: BATCH },
    photo_metadata: { type: 'string', enum: ['strip', 'keep', 'keep_location'], description: PHOTO_METADATA_TEXT },
    frame: { type: 'integer', minimum: 1, maximum: 10000, description: FRAME },
    title: { type: 'string', minLength: 1, maxLength: 300, description: METADATA('title') },
    author: { type: 'string', minLength: 1, maxLength: 300, description: METADATA('author') },
    paper: { type: 'string', maxLength: 40, description: PAPER },
    landscape: { type: 'boolean' },
    margin: { type: 'string', maxLength: 60, description: MARGIN },
    scale: { type: 'number', minimum: 0.1, maximum: 2 },
    print_background: { type: 'boolean' },
    prefer_css_page_size: { type: 'boolean' },
    header_html: { type: 'string', maxLength: 8192, description: HEADER },
    footer_html: { type: 'string', maxLength: 8192, description: HEADER },
    media: { type: 'string', enum: ['print', 'screen'] },
    wait_for: { type: 'string', minLength: 1, maxLength: 256 },
    single_page: { type: 'boolean' },
    viewport_width: { type: 'integer', minimum: 320, maximum: 3840 },
    device_scale: { type: 'number', minimum: 1, maximum: 3 },
    css: { type: 'string', maxLength: 65536 },
    start: { type: 'number', minimum: 0, maximum: 86400, description: VIDEO_DESCRIPTIONS.start },
    duration: { type: 'number', minimum: 0.01, maximum: 60, description: VIDEO_DESCRIPTIONS.duration },
    fps: { type: 'integer', minimum: 1, maximum: 30, description: VIDEO_DESCRIPTIONS.fps },
    width: { type: 'integer', minimum: 16, maximum: 1920, description: VIDEO_DESCRIPTIONS.width },
    loop: { type: 'integer', minimum: 0, maximum: 65535, description: VIDEO_DESCRIPTIONS.loop },
    animated: { type: 'boolean', description: VIDEO_DESCRIPTIONS.animated },
    ...pdfFormMultipartFields,
    sign: { type: 'string', maxLength: 2048, description: SIGN },
    pdfa: { type: 'string', enum: ['1b', '2b', '3b'], description: PDF_ARCHIVE_DESCRIPTIONS.pdfa },
    pdf_ua: { type: 'boolean', description: PDF_ARCHIVE_DESCRIPTIONS.pdf_ua },
    language: { type: 'string', minLength: 2, maxLength: 35, description: PDF_ARCHIVE_DESCRIPTIONS.language },
    ...markupFormFields,
    webhook_url: { type: 'string', minLength: 1, maxLength: 2048, description: WEBHOOK_URL },
    export: { type: 'string', maxLength: 8192, description: `${EXPORT} In a form: the export object as JSON text.` },
  },
});

/** `POST /api/v1/upload` multipart body (one file part; no text field is accepted). */
export const UploadBody = Type.Unsafe({
  type: 'object',
  nullable: true,
  required: ['file'],
  properties: { file: { type: 'string', format: 'binary' } },
});

/** The conversion record (convert-decisions.md item 5). */
export const ConversionRecordSchema = Type.Object({
  success: Type.Boolean(),
  id: Type.String({ description: '`cnv_…`; conversions and jobs share the id space.' }),
  status: StringEnum(CONVERSION_STATUSES),
  source: Type.Object({
    upload_id: Type.String(),
    format: Type.String(),
    size_bytes: Type.Integer(),
    sha256: Sha256,
    url: Type.Optional(Type.String({ description: 'Extension: the address the source was fetched from (after redirects), when it came from a URL.' })),
  }),
  target_format: Type.String(),
  options: Type.Object({
    preset: Nullable(Type.String()),
    quality: Nullable(Type.Integer()),
    page_range: Nullable(Type.String()),
    ocr_language: Nullable(Type.String({ description: 'Normalised tesseract codes, e.g. "eng+deu".' })),
    max_output_bytes: Nullable(Type.Integer()),
    remove_active_content: Type.Optional(Type.Boolean({ description: 'Extension: present (true) when active content was asked to be removed.' })),
    compression: Type.Optional(Type.String({ description: 'Extension: present when a PDF compression level was asked for explicitly.' })),
    rotate: Type.Optional(Type.Integer({ description: 'Extension: present when the pages were asked to be turned (clockwise degrees).' })),
    watermark: Type.Optional(Type.String({ description: 'Extension: present when a watermark was asked for.' })),
    password: Type.Optional(Type.Literal(true, { description: 'Extension: present (true) when a password to open the source was given; never the password.' })),
    set_password: Type.Optional(Type.Literal(true, { description: 'Extension: present (true) when the output was encrypted with a password; never the password.' })),
    split: Type.Optional(Type.Literal(true, { description: 'Extension: present (true) when the PDF was split into a zip of one PDF per page (output.format is then zip).' })),
    batch: Type.Optional(Type.Literal(true, { description: 'Extension (issue 24): present (true) when each file of an archive was converted (output.format is then zip).' })),
    photo_metadata: Type.Optional(StringEnum(['keep', 'keep_location'], { description: 'Extension (issue 31): present when the source\'s photo metadata was asked to be copied.' })),
    frame: Type.Optional(Type.Integer({ description: 'Extension (issue 31): present when a frame of an animated source was picked for a still output.' })),
    title: Type.Optional(Type.String({ description: 'Extension: the PDF title asked for.' })),
    author: Type.Optional(Type.String({ description: 'Extension: the PDF author asked for.' })),
    // Extensions (issue 22): the browser's page options, present when given.
    ...pageOptionFields,
    // Extensions (issue 31): the video → picture options, present when given.
    ...videoOptionFields,
    // Extensions (issue 25): the PDF form and metadata options, present when given.
    ...pdfFormRecordFields,
    ...signRecordField,
    // Extensions (issue 25): PDF/A level, PDF/UA and its language, present when given.
    pdfa: Type.Optional(Type.String({ description: 'Extension (issue 25): the PDF/A level asked for (1b, 2b, 3b).' })),
    pdf_ua: Type.Optional(Type.Literal(true, { description: 'Extension (issue 25): present (true) when a tagged PDF/UA was asked for.' })),
    language: Type.Optional(Type.String({ description: 'Extension (issue 25): the PDF/UA language asked for, as a canonical BCP 47 tag.' })),
    // Extensions (issue 25): redaction and page marks, present when given (normalised, defaults filled in).
    ...markupOptionFields,
    stamps: Type.Optional(Type.Array(StampRecord, { description: 'Extension (issue 25): the stamps asked for, defaults filled in; an image is answered by image_sha256 and image_bytes, not sent back.' })),
  }),
  output: Nullable(
    Type.Object({
      filename: Type.String(),
      format: Type.String({ description: 'The target format; zip when the split option cut a PDF into pages or the batch option converted an archive’s files.' }),
      mime_type: Type.String(),
      size_bytes: Type.Integer(),
      sha256: Sha256,
      pages: Type.Optional(Type.Integer()),
      width: Type.Optional(Type.Integer()),
      height: Type.Optional(Type.Integer()),
      duration_s: Type.Optional(Type.Number()),
      blocked_requests: Type.Optional(
        Type.Integer({ minimum: 0, description: 'Extension (issue 22): pages rendered by the browser — how many requests the page made were refused (other hosts, file:, loopback, …); 0 when none.' }),
      ),
      redacted_areas: Type.Optional(Type.Integer({ minimum: 0, description: 'Extension (issue 25): a redact conversion — the boxes redacted (the areas given plus every text and regex match).' })),
      files: Type.Optional(
        Type.Object(
          { total: Type.Integer({ minimum: 1 }), converted: Type.Integer({ minimum: 1 }), failed: Type.Integer({ minimum: 0 }) },
          { description: 'Extension (issue 24): a batch — the archive’s files, those converted and those that failed (each failed file was refunded); manifest.json in the zip says which.' },
        ),
      ),
      engines: Type.Optional(
        Type.Array(Type.String(), {
          description:
            'The engine chain that produced the output, in order (convert-decisions.md item 19), e.g. ["libreoffice"], ["libreoffice-cold"] (a one-off soffice run after the warm instance failed), ["libreoffice", "poppler"]. No versions.',
        }),
      ),
    }),
  ),
  download_token: Nullable(Type.String({ description: 'Set once completed; downloads need it and the owner’s API key.' })),
  download_url: Nullable(Type.String({ description: 'Absolute URL of the download (GET with the owner’s API key).' })),
  status_url: Type.String({ description: 'Absolute URL of this record.' }),
  error: Nullable(Type.Object({ code: Type.String(), message: Type.String() })),
  webhook_url: Type.Optional(Type.String({ description: 'Extension (issue 24): the per-request `webhook_url` told of the outcome, when one was given.' })),
  export: Type.Optional(
    Type.Object(
      {
        status: StringEnum(['pending', 'completed', 'failed']),
        endpoint: Nullable(Type.String({ description: 'Null: AWS S3.' })),
        bucket: Type.String(),
        region: Type.String(),
        key_template: Type.String(),
        key: Nullable(Type.String({ description: 'The object’s key, once the output was named.' })),
        force_path_style: Type.Boolean(),
        etag: Nullable(Type.String({ description: 'As the store answered it, without quotes ("…-N" after a multipart upload of N parts).' })),
        error: Nullable(Type.Object({ code: Type.String({ description: 'export_failed' }), message: Type.String() })),
        completed_at: Nullable(DateTime()),
      },
      { description: 'Extension (issue 24): the export to S3-compatible storage asked for, and how it went. Never the credentials.' },
    ),
  ),
  created_at: DateTime(),
  started_at: Nullable(DateTime()),
  completed_at: Nullable(DateTime()),
  expires_at: DateTime({ description: 'When the output (and the record’s token) expire.' }),
});

export const IdParams = Type.Object({ id: Type.String() });
export const TokenParams = Type.Object({ token: Type.String() });
export const JobTokenParams = Type.Object({ id: Type.String(), token: Type.String() });

/** Binary download answers (200 and 206) for the document. */
/** A download: sent with the output's own media type (`image/webp`, `application/pdf`, …; `application/octet-stream` when it has none). */
export const Binary = (description: string) => ({
  description: `${description} Content-Type is the output's media type.`,
  content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
});
