"""Prepares a PDF for a PAdES signature, for the converter's `sign` option.

Run in the engine sandbox by pdf-sign.ts:
  `python3 pdf-sign-prepare.py INPUT OUTPUT PARAMS-JSON`.
PARAMS-JSON: {nonce, contents_bytes, m (a PDF date), name, visible, page (1-based, -1 = last),
box: [x, y, width, height] | null (points from the top-left of the page as displayed),
reason, location, contact (strings or null), lines (the visible box's text)}.

Appends an incremental update (the bytes of INPUT are kept, so earlier signatures stay
valid): a signature field and widget on the page, its appearance (visible) and a signature
dictionary whose /ByteRange and /Contents are placeholders of fixed width, preceded by the
comment line `%mailconv-sign NONCE` so the trusted code finds them in a hostile file. The
private key is never here: the trusted code fills /ByteRange and /Contents.
A damaged INPUT (qpdf had to rebuild its cross-reference table) is rewritten first: an update of a broken
cross-reference table would not be readable.

Exit 0 on success; 2 not a readable PDF; 3 no such page; 4 the box is outside the page;
5 the PDF is encrypted.
"""
import json
import re
import sys

import pikepdf

BYTERANGE_PLACEHOLDER = b'/ByteRange [0 0000000000 0000000000 0000000000]'
# qpdf's warnings when it had to rebuild the cross-reference table (other warnings leave it usable).
DAMAGED = re.compile(r'damaged|reconstruct|xref|cross-reference|startxref', re.IGNORECASE)


def pdf_text(value):
    """A PDF text string (PDFDocEncoding or UTF-16, as pikepdf chooses)."""
    return pikepdf.String(value).unparse()


def winansi_literal(text):
    """A literal string for Helvetica with WinAnsiEncoding; characters outside it become '?'."""
    raw = text.encode('cp1252', errors='replace')
    out = bytearray(b'(')
    for b in raw:
        if b in (0x28, 0x29, 0x5C):
            out += b'\\' + bytes([b])
        elif b < 0x20 or b > 0x7E:
            out += b'\\%03o' % b
        else:
            out.append(b)
    out += b')'
    return bytes(out)


def appearance(width, height, lines):
    """The content of a visible signature's box: a frame and the lines in Helvetica."""
    size = min(9.0, max(4.0, (height - 8) / max(1, len(lines)) / 1.25))
    max_chars = max(4, int((width - 8) / (size * 0.52)))
    ops = [b'q 1 1 1 rg 0 0 %.2f %.2f re f Q' % (width, height),
           b'q 0.2 0.2 0.4 RG 1 w 0.5 0.5 %.2f %.2f re S Q' % (width - 1, height - 1),
           b'BT 0 0 0 rg /Helv %.2f Tf' % size]
    y = height - 4 - size
    for line in lines:
        if len(line) > max_chars:
            line = line[:max_chars - 1] + '\u2026'
        ops.append(b'1 0 0 1 4 %.2f Tm %s Tj' % (y, winansi_literal(line)))
        y -= size * 1.25
    ops.append(b'ET')
    return b'\n'.join(ops)


def user_rect(page, box):
    """The box (x, y, w, h from the top-left as displayed) in the page's user space, and the page's rotation."""
    crop = [float(v) for v in page.obj.get('/CropBox', page.mediabox)]
    x0, y0, x1, y1 = min(crop[0], crop[2]), min(crop[1], crop[3]), max(crop[0], crop[2]), max(crop[1], crop[3])
    rotate = int(page.obj.get('/Rotate', 0)) % 360
    shown_w, shown_h = (y1 - y0, x1 - x0) if rotate in (90, 270) else (x1 - x0, y1 - y0)
    if box is None:
        box = [shown_w - 36 - 200, shown_h - 36 - 60, 200, 60]
    x, y, w, h = box
    if x < 0 or y < 0 or x + w > shown_w + 0.01 or y + h > shown_h + 0.01:
        return None, rotate, box

    def to_user(dx, dy):
        if rotate == 90:
            return x0 + dy, y0 + dx
        if rotate == 180:
            return x1 - dx, y0 + dy
        if rotate == 270:
            return x1 - dy, y1 - dx
        return x0 + dx, y1 - dy

    (ax, ay), (bx, by) = to_user(x, y), to_user(x + w, y + h)
    return [min(ax, bx), min(ay, by), max(ax, bx), max(ay, by)], rotate, box


def last_startxref(data):
    found = re.findall(rb'startxref\s+(\d+)', data[-4096:])
    return int(found[-1]) if found else None


def main():
    source, target, params_json = sys.argv[1:4]
    p = json.loads(params_json)
    try:
        pdf = pikepdf.open(source)
    except pikepdf.PasswordError:
        print('encrypted', file=sys.stderr)
        return 5
    except Exception as e:  # noqa: BLE001 - any failure to open is the input's fault
        print(f'not a readable PDF: {type(e).__name__}', file=sys.stderr)
        return 2
    if pdf.is_encrypted:
        print('encrypted', file=sys.stderr)
        return 5
    with open(source, 'rb') as f:
        base = f.read()
    if any(DAMAGED.search(w) for w in pdf.get_warnings()) or last_startxref(base) is None:
        # Its cross-reference table was rebuilt on opening: an update cannot point at it; rewrite first.
        pdf.save(target)
        pdf.close()
        pdf = pikepdf.open(target)
        with open(target, 'rb') as f:
            base = f.read()
    with pdf:
        return prepare(pdf, base, p, target)


def prepare(pdf, base, p, target):
    pages = len(pdf.pages)
    index = pages - 1 if p['page'] == -1 else p['page'] - 1
    if index < 0 or index >= pages:
        print(f'page {p["page"]} of {pages}', file=sys.stderr)
        return 3
    page = pdf.pages[index]
    rect, rotate, box = [0, 0, 0, 0], 0, None
    if p['visible']:
        rect, rotate, box = user_rect(page, p['box'])
        if rect is None:
            print('box outside the page', file=sys.stderr)
            return 4

    modified = set()
    sig = pdf.make_indirect(pikepdf.Dictionary())
    widget = pdf.make_indirect(pikepdf.Dictionary())
    ap = pdf.make_indirect(pikepdf.Dictionary()) if p['visible'] else None

    annots = page.obj.get('/Annots')
    if annots is None or not isinstance(annots, pikepdf.Array):
        page.obj.Annots = pikepdf.Array([widget])
        modified.add(page.obj.objgen)
    else:
        annots.append(widget)
        modified.add(annots.objgen if annots.is_indirect else page.obj.objgen)

    root = pdf.Root
    form = root.get('/AcroForm')
    if form is None or not isinstance(form, pikepdf.Dictionary):
        form = pdf.make_indirect(pikepdf.Dictionary(Fields=pikepdf.Array()))
        root.AcroForm = form
        modified.add(root.objgen)
    holder = form.objgen if form.is_indirect else root.objgen
    modified.add(holder)
    fields = form.get('/Fields')
    if fields is None or not isinstance(fields, pikepdf.Array):
        fields = pikepdf.Array()
        form.Fields = fields
    names = {str(f.get('/T', '')) for f in fields if isinstance(f, pikepdf.Dictionary)}
    fields.append(widget)
    if fields.is_indirect:
        modified.add(fields.objgen)
    form.SigFlags = 3
    n = 1
    while f'Signature{n}' in names:
        n += 1

    objects = {}
    for num, gen in modified:
        objects[(num, gen)] = pdf.get_object(num, gen).unparse(resolved=True)
    sig_dict = [b'<<', b'%mailconv-sign ' + p['nonce'].encode('ascii'), BYTERANGE_PLACEHOLDER,
                b'/Contents <' + b'0' * (2 * p['contents_bytes']) + b'>',
                b'/Type /Sig /Filter /Adobe.PPKLite /SubFilter /ETSI.CAdES.detached',
                b'/M ' + pdf_text(p['m']), b'/Name ' + pdf_text(p['name'])]
    for key, field in ((b'/Reason', 'reason'), (b'/Location', 'location'), (b'/ContactInfo', 'contact')):
        if p.get(field):
            sig_dict.append(key + b' ' + pdf_text(p[field]))
    sig_dict.append(b'>>')
    objects[sig.objgen] = b'\n'.join(sig_dict)
    widget_dict = (b'<< /Type /Annot /Subtype /Widget /FT /Sig /T ' + pdf_text(f'Signature{n}')
                   + b' /V %d 0 R /F 132 /P %d %d R /Rect [%.2f %.2f %.2f %.2f]' % (sig.objgen[0], page.obj.objgen[0], page.obj.objgen[1], *rect))
    if ap is not None:
        widget_dict += b' /AP << /N %d 0 R >>' % ap.objgen[0]
        w, h = box[2], box[3]
        content = appearance(w, h, p['lines'])
        matrix = {0: b'1 0 0 1', 90: b'0 1 -1 0', 180: b'-1 0 0 -1', 270: b'0 -1 1 0'}[rotate]
        objects[ap.objgen] = (b'<< /Type /XObject /Subtype /Form /BBox [0 0 %.2f %.2f] /Matrix [%s 0 0]' % (w, h, matrix)
                              + b' /Resources << /Font << /Helv << /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >> >> >>'
                              + b' /Length %d >>\nstream\n' % len(content) + content + b'\nendstream')
    objects[widget.objgen] = widget_dict + b' >>'

    out = bytearray(base)
    if not out.endswith(b'\n'):
        out += b'\n'
    offsets = {}
    for (num, gen) in sorted(objects):
        offsets[(num, gen)] = len(out)
        out += b'%d %d obj\n' % (num, gen) + objects[(num, gen)] + b'\nendobj\n'
    xref_at = len(out)
    out += b'xref\n'
    keys = sorted(offsets)
    i = 0
    while i < len(keys):
        j = i
        while j + 1 < len(keys) and keys[j + 1][0] == keys[j][0] + 1:
            j += 1
        out += b'%d %d\n' % (keys[i][0], j - i + 1)
        for k in keys[i:j + 1]:
            out += b'%010d %05d n\r\n' % (offsets[k], k[1])
        i = j + 1
    size = max(int(pdf.trailer.get('/Size', 0)), max(k[0] for k in keys) + 1)
    trailer = b'/Size %d /Root %d %d R' % (size, root.objgen[0], root.objgen[1])
    info = pdf.trailer.get('/Info')
    if info is not None and info.is_indirect:
        trailer += b' /Info %d %d R' % info.objgen
    if '/ID' in pdf.trailer:
        trailer += b' /ID ' + pdf.trailer.ID.unparse(resolved=True)
    prev = last_startxref(base)
    trailer += b' /Prev %d' % prev
    out += b'trailer\n<< ' + trailer + b' >>\nstartxref\n%d\n%%%%EOF\n' % xref_at
    with open(target, 'wb') as f:
        f.write(out)
    return 0


if __name__ == '__main__':
    sys.exit(main())
