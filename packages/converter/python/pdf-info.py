"""Writes a PDF's facts as JSON, for the converter's pdf -> json pair and the `form_data` checks.

Run in the engine sandbox by engines/pdf-info.engine.ts:
  `python3 pdf-info.py INPUT OUTPUT`.
Uses pikepdf (Debian's python3-pikepdf, on qpdf). The PDF is hostile: every string is cut to
a length, every list to a count, and nothing is followed that is not a dictionary where one
is expected; the service checks the JSON again (it parses, within a size cap) before using it.
The image count is not ours: the engine adds `pdfimages -list`'s (the same count the pdf -> zip
pair extracts). Exit 0 on success; 2 with a message on stderr when the input is not a PDF
pikepdf can open.
"""
import datetime
import json
import re
import sys

import pikepdf
from pikepdf import Array, Dictionary, Name

MAX_TEXT = 2000
MAX_FIELDS = 2000
MAX_OPTIONS = 500
MAX_SIGNATURES = 100
MAX_DEPTH = 20
# Characters of text the facts may hold in all: one long string referenced a million times
# (an /Opt array shared by every field) would otherwise fill the memory cap before the file cap.
MAX_TOTAL_TEXT = 2_000_000
_budget = [MAX_TOTAL_TEXT]


class TooLarge(Exception):
    """The facts would hold more text than MAX_TOTAL_TEXT."""
# Field flags (PDF 32000-1, tables 221, 226, 228, 230).
FF_READ_ONLY = 1 << 0
FF_REQUIRED = 1 << 1
FF_MULTILINE = 1 << 12
FF_RADIO = 1 << 15
FF_PUSHBUTTON = 1 << 16
FF_COMBO = 1 << 17
FF_MULTISELECT = 1 << 21


def text(value):
    """A PDF string or name as text (cut), else None."""
    if isinstance(value, pikepdf.String):
        s = str(value)
    elif isinstance(value, Name):
        s = str(value)[1:]
    else:
        return None
    s = s[:MAX_TEXT]
    _budget[0] -= len(s)
    if _budget[0] < 0:
        raise TooLarge()
    return s


def pdf_date(value):
    """`D:20200829120000+02'00'` as ISO 8601, or the text as it was when it does not parse."""
    s = text(value)
    if s is None:
        return None
    m = re.match(r"^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?\s*(Z|[+-]\d{2}'?\d{2}'?|[+-]\d{2})?", s)
    if not m:
        return s
    y, mo, d, h, mi, sec, tz = m.groups()
    try:
        stamp = datetime.datetime(int(y), int(mo or 1), int(d or 1), int(h or 0), int(mi or 0), int(sec or 0))
    except ValueError:
        return s
    iso = stamp.isoformat()
    if tz == 'Z':
        return iso + 'Z'
    if tz:
        digits = re.sub(r"[^0-9]", '', tz)
        return f"{iso}{tz[0]}{digits[0:2]}:{(digits[2:4] or '00')}"
    return iso


def inherited(node, key):
    """A field's inheritable entry: its own, else its nearest ancestor's."""
    seen = 0
    while isinstance(node, Dictionary) and seen < MAX_DEPTH:
        if key in node:
            return node[key]
        node = node.get('/Parent')
        seen += 1
    return None


def widget_pages(pdf):
    """Annotation object id -> 1-based page number."""
    out = {}
    for number, page in enumerate(pdf.pages, start=1):
        annots = page.obj.get('/Annots')
        if not isinstance(annots, Array):
            continue
        for annot in annots:
            if isinstance(annot, Dictionary) and annot.is_indirect:
                out.setdefault(annot.objgen, number)
    return out


def on_states(widget):
    """The appearance states of a check box or radio widget other than /Off."""
    ap = widget.get('/AP')
    normal = ap.get('/N') if isinstance(ap, Dictionary) else None
    if not isinstance(normal, Dictionary):
        return []
    return [str(k)[1:] for k in normal.keys() if k != '/Off'][:MAX_OPTIONS]


def choice_options(field):
    """A choice field's export values (an /Opt entry may be [export, display])."""
    opt = inherited(field, '/Opt')
    out = []
    if isinstance(opt, Array):
        for item in list(opt)[:MAX_OPTIONS]:
            if isinstance(item, Array) and len(item) >= 1:
                item = item[0]
            t = text(item)
            if t is not None:
                out.append(t)
    return out


def field_type(ft, flags):
    if ft == '/Tx':
        return 'text'
    if ft == '/Btn':
        if flags & FF_PUSHBUTTON:
            return 'button'
        return 'radio' if flags & FF_RADIO else 'checkbox'
    if ft == '/Ch':
        return 'choice' if flags & FF_COMBO else 'list'
    if ft == '/Sig':
        return 'signature'
    return None


def terminal_fields(pdf):
    """(full name, field dictionary, widgets) of every terminal field, depth first."""
    acro = pdf.Root.get('/AcroForm')
    fields = acro.get('/Fields') if isinstance(acro, Dictionary) else None
    if not isinstance(fields, Array):
        return []
    out = []
    seen = set()

    def walk(node, prefix, depth):
        if len(out) >= MAX_FIELDS or depth > MAX_DEPTH or not isinstance(node, Dictionary):
            return
        if node.is_indirect:
            if node.objgen in seen:
                return
            seen.add(node.objgen)
        part = text(node.get('/T'))
        name = prefix if part is None else (f'{prefix}.{part}' if prefix else part)
        kids = node.get('/Kids')
        kids = [k for k in kids if isinstance(k, Dictionary)] if isinstance(kids, Array) else []
        # Kids with names are fields of their own; kids without are this field's widgets.
        named = [k for k in kids if '/T' in k]
        if named:
            for kid in named:
                walk(kid, name, depth + 1)
            return
        widgets = kids if kids else ([node] if node.get('/Subtype') == '/Widget' or '/Rect' in node else [])
        out.append((name, node, widgets))

    for f in list(fields):
        walk(f, '', 0)
    return out


def describe_field(name, field, widgets, pages):
    ft = inherited(field, '/FT')
    ff = inherited(field, '/Ff')
    flags = int(ff) if isinstance(ff, int) else 0
    kind = field_type(str(ft) if isinstance(ft, Name) else None, flags)
    if kind is None:
        return None
    value = inherited(field, '/V')
    page = None
    for w in widgets:
        if w.is_indirect and w.objgen in pages:
            page = pages[w.objgen]
            break
    out = {'name': name, 'type': kind, 'value': None, 'page': page,
           'required': bool(flags & FF_REQUIRED), 'read_only': bool(flags & FF_READ_ONLY)}
    if kind == 'text':
        out['value'] = text(value) if text(value) is not None else None
        out['multiline'] = bool(flags & FF_MULTILINE)
        max_len = inherited(field, '/MaxLen')
        if isinstance(max_len, int):
            out['max_length'] = int(max_len)
    elif kind in ('checkbox', 'radio'):
        states = []
        for w in widgets:
            for s in on_states(w):
                if s not in states:
                    states.append(s)
        opt = choice_options(field)
        # With /Opt, the states are indices into it ("0", "1", …) and the export values are its entries.
        exports = [opt[int(s)] if s.isdigit() and int(s) < len(opt) else s for s in states] if opt else states
        current = text(value) if isinstance(value, Name) else None
        chosen = None if current in (None, 'Off') else (opt[int(current)] if opt and current.isdigit() and int(current) < len(opt) else current)
        out['options'] = exports
        out['states'] = states
        out['value'] = chosen is not None if kind == 'checkbox' else chosen
    elif kind in ('choice', 'list'):
        out['options'] = choice_options(field)
        if isinstance(value, Array):
            picked = [t for t in (text(v) for v in list(value)[:MAX_OPTIONS]) if t is not None]
        else:
            picked = [text(value)] if text(value) is not None else []
        if kind == 'list' and flags & FF_MULTISELECT:
            out['multi_select'] = True
            out['value'] = picked
        else:
            out['value'] = picked[0] if picked else None
    elif kind == 'signature':
        out['value'] = isinstance(value, Dictionary)
    return out


def signature(name, field):
    v = field.get('/V')
    if not isinstance(v, Dictionary):
        return None
    return {'field': name, 'signer': text(v.get('/Name')), 'signed_at': pdf_date(v.get('/M')),
            'reason': text(v.get('/Reason')), 'location': text(v.get('/Location'))}


DOCINFO = {'title': '/Title', 'author': '/Author', 'subject': '/Subject', 'keywords': '/Keywords',
           'creator': '/Creator', 'producer': '/Producer', 'created': '/CreationDate', 'modified': '/ModDate'}
XMP = {'title': 'dc:title', 'author': 'dc:creator', 'subject': 'dc:description', 'keywords': 'pdf:Keywords',
       'creator': 'xmp:CreatorTool', 'producer': 'pdf:Producer', 'created': 'xmp:CreateDate', 'modified': 'xmp:ModifyDate'}


def xmp_text(value):
    if isinstance(value, (list, set, tuple)):
        value = ', '.join(str(v) for v in value)
    return None if value is None else str(value)[:MAX_TEXT]


def metadata(pdf):
    """The information dictionary's entries, the XMP's where the dictionary has none."""
    try:
        xmp = pdf.open_metadata()
    except Exception:  # noqa: BLE001 - broken XMP: the dictionary alone
        xmp = None
    info = pdf.trailer.get('/Info')
    out = {}
    for key, entry in DOCINFO.items():
        raw = info.get(entry) if isinstance(info, Dictionary) else None
        value = pdf_date(raw) if key in ('created', 'modified') else text(raw)
        if value is None and xmp is not None:
            try:
                value = xmp_text(xmp.get(XMP[key]))
            except Exception:  # noqa: BLE001
                value = None
        out[key] = value
    claims = {'pdfa': None, 'pdfua': False}
    if xmp is not None:
        # pikepdf knows pdfaid's prefix; pdfuaid's is asked for by its namespace.
        try:
            part = xmp.get('pdfaid:part')
            conformance = xmp.get('pdfaid:conformance')
            if part:
                claims['pdfa'] = f'{str(part)[:4]}{str(conformance or "")[:2].lower()}'
        except Exception:  # noqa: BLE001
            pass
        try:
            claims['pdfua'] = bool(xmp.get('{http://www.aiim.org/pdfua/ns/id/}part'))
        except Exception:  # noqa: BLE001
            pass
    return out, claims


def open_pdf(path):
    """The PDF at `path`, or None (said on stderr) when pikepdf cannot open it: the input's fault."""
    try:
        return pikepdf.open(path)
    except Exception as e:  # noqa: BLE001 - any failure to open is the input's fault
        print(f'not a readable PDF: {type(e).__name__}', file=sys.stderr)
        return None


def main():
    source, target = sys.argv[1:3]
    pdf = open_pdf(source)
    if pdf is None:
        return 2
    try:
        facts = describe(pdf)
    except TooLarge:
        print('too large: the facts hold more text than the cap', file=sys.stderr)
        return 3
    with open(target, 'w', encoding='utf-8') as out:
        json.dump(facts, out, ensure_ascii=False)
    return 0


def describe(pdf):
    """The facts of an open PDF (closed on the way out)."""
    with pdf:
        sizes = []
        for number, page in enumerate(pdf.pages, start=1):
            try:
                box = [float(v) for v in page.obj.get('/CropBox', page.mediabox)]
                rotation = int(page.obj.get('/Rotate', 0)) % 360
            except Exception:  # noqa: BLE001 - a broken box: unknown
                box, rotation = [0, 0, 0, 0], 0
            sizes.append({'page': number, 'width': round(abs(box[2] - box[0]), 2),
                          'height': round(abs(box[3] - box[1]), 2), 'rotation': rotation})
        pages = widget_pages(pdf)
        fields, signatures = [], []
        for name, field, widgets in terminal_fields(pdf):
            described = describe_field(name, field, widgets, pages)
            if described is None:
                continue
            fields.append(described)
            if described['type'] == 'signature' and described['value'] and len(signatures) < MAX_SIGNATURES:
                signatures.append(signature(name, field))
        meta, claims = metadata(pdf)
        mark = pdf.Root.get('/MarkInfo')
        marked = isinstance(mark, Dictionary) and bool(mark.get('/Marked', False))
        facts = {
            'pdf_version': str(pdf.pdf_version)[:8],
            'pages': len(pdf.pages),
            'page_sizes': sizes,
            'encrypted': bool(pdf.is_encrypted),
            'metadata': meta,
            'pdfa': claims['pdfa'],
            'pdfua': claims['pdfua'],
            'tagged': marked and '/StructTreeRoot' in pdf.Root,
            'signatures': signatures,
            'form': {'fields': fields},
        }
    return facts


if __name__ == '__main__':
    sys.exit(main())
