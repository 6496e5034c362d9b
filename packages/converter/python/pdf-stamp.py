"""Page numbers, Bates numbers, stamps, header and footer, for the converter's options of
the same names (issue 25).

Run in the engine sandbox by pdf-stamp.ts:
  `python3 pdf-stamp.py INPUT OUTPUT SPEC.json`
SPEC: {"date": "YYYY-MM-DD", "title": str|null, "items": [item]}, each item
  {"text": str} or {"image": path, "width": points|null}, with "pages": [[from, to|null]]
  (1-based; null = to the last page), "numbering": null | {"start": n, "digits": n|null,
  "prefix": str, "suffix": str}, "position", "font_size", "color": [r, g, b], "opacity",
  "rotation" (degrees, counter-clockwise as displayed), "margin".
Text is drawn with the base-14 Helvetica (PyMuPDF's `helv`), images with insert_image /
show_pdf_page; everything is placed in the page's displayed frame and turned with its
/Rotate, so it reads upright as the page is shown. Tokens: {page} {pages} {date} {title};
a numbering item's {page} is its running number (Bates: zero-padded, prefix and suffix).
Exit 0 on success; 2 with a message on stderr when the input or an image cannot be read.
"""
import json
import sys

import fitz

FONT = 'helv'
MAX_IMAGE_SIDE = 4096


def pages_of(spans, count):
    """The chosen pages, each mapped to its rank among them (0 for the first)."""
    out = set()
    for start, end in spans:
        last = count if end is None else min(end, count)
        out.update(range(max(start, 1), last + 1))
    return {p: rank for rank, p in enumerate(sorted(out))}


def place(frame, position, width, height, margin):
    """Top-left corner of a width×height box at `position` in the displayed page `frame`."""
    vertical, _, horizontal = position.partition('-')
    if position == 'center':
        vertical, horizontal = 'middle', 'center'
    x = {'left': margin, 'center': (frame.width - width) / 2, 'right': frame.width - margin - width}[horizontal]
    y = {'top': margin, 'middle': (frame.height - height) / 2, 'bottom': frame.height - margin - height}[vertical]
    return fitz.Point(x, y)


def fill_tokens(text, values):
    for key, value in values.items():
        text = text.replace('{' + key + '}', value)
    return text


def draw_text(page, item, text):
    size = item['font_size']
    width = fitz.get_text_length(text, fontname=FONT, fontsize=size)
    # The box of the line as displayed: baseline at 80 % of the font size under its top (Helvetica's ascent).
    corner = place(page.rect, item['position'], width, size, item['margin'])
    baseline = fitz.Point(corner.x, corner.y + size * 0.8)
    centre = fitz.Point(corner.x + width / 2, corner.y + size / 2)
    derotate = page.derotation_matrix
    morph = None
    if item['rotation']:
        # fitz's y axis points down: its positive angle turns counter-clockwise as displayed.
        morph = (centre * derotate, fitz.Matrix(item['rotation']))
    page.insert_text(
        baseline * derotate, text, fontsize=size, fontname=FONT, color=tuple(item['color']),
        fill_opacity=item['opacity'], rotate=page.rotation, morph=morph, overlay=True,
    )


def image_source(item):
    """A one-page PDF holding the image (opacity folded into its alpha), and its size in pixels."""
    pix = fitz.Pixmap(item['image'])
    if pix.width > MAX_IMAGE_SIDE or pix.height > MAX_IMAGE_SIDE:
        raise ValueError('image larger than 4096×4096')
    if item['opacity'] < 1:
        if not pix.alpha:
            pix = fitz.Pixmap(pix, 1)
        table = bytes(round(i * item['opacity']) for i in range(256))
        pix.set_alpha(bytes(pix.samples_mv[pix.n - 1::pix.n]).translate(table))
    src = fitz.open()
    holder = src.new_page(width=pix.width, height=pix.height)
    holder.insert_image(holder.rect, pixmap=pix)
    return src, pix.width, pix.height


def draw_image(page, item, source):
    src, px_w, px_h = source
    frame = page.rect
    width = item.get('width') or px_w * 0.75
    width = min(width, frame.width - 2 * item['margin'])
    height = width * px_h / px_w
    corner = place(frame, item['position'], width, height, item['margin'])
    shown = fitz.Rect(corner, corner.x + width, corner.y + height)
    # show_pdf_page fits the (turned) image inside the rectangle; its angle turns counter-clockwise.
    page.show_pdf_page(shown * page.derotation_matrix, src, 0, rotate=page.rotation + item['rotation'], overlay=True)


def main():
    source, target, spec_path = sys.argv[1:4]
    with open(spec_path, encoding='utf-8') as f:
        spec = json.load(f)
    try:
        doc = fitz.open(source)
    except Exception as e:  # noqa: BLE001 - any failure to open is the input's fault
        print(f'not a readable PDF: {type(e).__name__}', file=sys.stderr)
        return 2
    count = doc.page_count
    title = spec.get('title')
    if title is None:
        title = (doc.metadata or {}).get('title') or ''
    plans = []
    for item in spec['items']:
        try:
            image = image_source(item) if 'image' in item else None
        except Exception as e:  # noqa: BLE001 - an image PyMuPDF cannot decode is the input's fault
            print(f'image not readable: {type(e).__name__}: {e}', file=sys.stderr)
            return 2
        plans.append((item, image, pages_of(item['pages'], count)))
    for page in doc:
        number = page.number + 1
        for item, image, chosen in plans:
            if number not in chosen:
                continue
            if image:
                draw_image(page, item, image)
                continue
            values = {'page': str(number), 'pages': str(count), 'date': spec['date'], 'title': title}
            numbering = item.get('numbering')
            if numbering:
                running = numbering['start'] + chosen[number]
                digits = numbering.get('digits')
                values['page'] = numbering['prefix'] + (str(running).zfill(digits) if digits else str(running)) + numbering['suffix']
                values['pages'] = str(numbering['start'] + len(chosen) - 1)
            draw_text(page, item, fill_tokens(item['text'], values))
    doc.save(target, garbage=3, deflate=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
