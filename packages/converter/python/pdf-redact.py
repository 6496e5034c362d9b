"""True redaction of a PDF, for the converter's `redact` option (issue 25).

Run in the engine sandbox by pdf-redact.ts:
  `python3 pdf-redact.py INPUT OUTPUT SPEC.json WORK.pdf`
SPEC: {"areas": [{"page", "x", "y", "width", "height"}] (points, top-left origin of the page
as displayed), "text": [str], "regex": str|null, "match_case": bool, "fill": [r, g, b] (0-1)}.

What is removed, in this order:
1. Vector paths and annotations (pikepdf): every path whose bounding box (its construction
   points through the current transformation, widened by half the line width) meets a box is
   dropped whole - construction and painting operator - because PyMuPDF 1.21's redaction
   keeps line art. A clipping path keeps its clip (`W n`) and loses its paint. Form XObjects
   drawn over a box are filtered the same way, into a copy used by that page only (at most 8
   deep). Annotations and links meeting a box and file attachments are dropped (a form
   field whose widget is dropped leaves the form too, value and all), and one Redact
   annotation per box is added for MuPDF. With text or regex, annotations whose /Contents or
   /T match are dropped and bookmark titles have their matches replaced by [redacted].
2. Text and images (MuPDF through PyMuPDF's low-level call, images=2): text under a box is
   removed from the content stream, not covered; image pixels under a box are blanked and the
   image data rewritten. The boxes are then painted with the fill colour.
3. Scrub: the information dictionary and XMP metadata, embedded files, JavaScript (document
   names, open action, document and page actions).
4. A full rewrite with garbage collection (garbage=4, clean): no earlier revision survives.

Prints {"areas": N} (boxes redacted) on stdout. Exit 0 on success; 2 with a message on
stderr when the input cannot be read or is too complex (nesting, operator count); 3 when the
regular expression does not compile; 4 when an area is on a page past the last.
"""
import json
import re
import sys

import fitz
import pikepdf

MAX_Q_DEPTH = 1000
MAX_OPERATORS = 5_000_000
MAX_FORM_DEPTH = 8
CONSTRUCT = {'m', 'l', 'c', 'v', 'y', 're', 'h'}
PAINT = {'S', 's', 'f', 'F', 'f*', 'B', 'B*', 'b', 'b*', 'n'}
CLIP = {'W', 'W*'}


class TooComplex(Exception):
    pass


class PastLastPage(Exception):
    pass


def mul(a, b):
    """Matrix product a×b of PDF matrices [a b c d e f] (a applied first)."""
    return [
        a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
        a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3],
        a[4] * b[0] + a[5] * b[2] + b[4], a[4] * b[1] + a[5] * b[3] + b[5],
    ]


def apply(m, x, y):
    return (m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5])


def meets(box, boxes):
    x0, y0, x1, y1 = box
    return any(x0 <= b[2] and b[0] <= x1 and y0 <= b[3] and b[1] <= y1 for b in boxes)


def nums(operands):
    return [float(v) for v in operands]


class PathFilter:
    """Drops the vector paths meeting the boxes (PDF user space of the page)."""

    def __init__(self, pdf, boxes):
        self.pdf = pdf
        self.boxes = boxes
        self.ops = 0
        self.copies = 0

    def filter(self, instructions, resources, ctm, depth):
        """Answers (new instructions, changed)."""
        out = []
        stack = []
        lw = 1.0
        path = []
        points = []
        changed = False
        for operands, op in instructions:
            self.ops += 1
            if self.ops > MAX_OPERATORS:
                raise TooComplex('too many content stream operators')
            name = str(op)
            if name == 'q':
                stack.append((ctm, lw))
                if len(stack) > MAX_Q_DEPTH:
                    raise TooComplex('graphics states nested too deeply')
            elif name == 'Q':
                if stack:
                    ctm, lw = stack.pop()
            elif name == 'cm' and len(operands) == 6:
                ctm = mul(nums(operands), ctm)
            elif name == 'w' and len(operands) == 1:
                lw = float(operands[0])
            if name in CONSTRUCT or (path and name in CLIP):
                path.append((operands, op))
                if name == 're' and len(operands) == 4:
                    x, y, w, h = nums(operands)
                    points += [apply(ctm, x, y), apply(ctm, x + w, y), apply(ctm, x, y + h), apply(ctm, x + w, y + h)]
                elif name in ('m', 'l', 'c', 'v', 'y'):
                    v = nums(operands)
                    points += [apply(ctm, v[i], v[i + 1]) for i in range(0, len(v) - 1, 2)]
                continue
            if name in PAINT and path:
                clip = any(str(o) in CLIP for _, o in path)
                if name != 'n' and points and self.hits(points, ctm, lw):
                    changed = True
                    if clip:
                        out += path + [([], pikepdf.Operator('n'))]
                else:
                    out += path + [(operands, op)]
                path, points = [], []
                continue
            if name == 'Do' and len(operands) == 1 and depth < MAX_FORM_DEPTH:
                replaced = self.form(operands[0], resources, ctm, depth)
                if replaced is not None:
                    changed = True
                    out.append(([replaced], op))
                    continue
            out.append((operands, op))
        out += path
        return out, changed

    def hits(self, points, ctm, lw):
        scale = abs(ctm[0] * ctm[3] - ctm[1] * ctm[2]) ** 0.5
        pad = max(lw, 1.0) * scale / 2
        xs = [p[0] for p in points]
        ys = [p[1] for p in points]
        return meets((min(xs) - pad, min(ys) - pad, max(xs) + pad, max(ys) + pad), self.boxes)

    def form(self, name, resources, ctm, depth):
        """A filtered copy of the Form XObject `name` when paths of it meet a box: its new name in `resources`."""
        xobjects = resources.get('/XObject') if resources is not None else None
        xobj = xobjects.get(name) if xobjects is not None else None
        if xobj is None or xobj.get('/Subtype') != '/Form':
            return None
        matrix = nums(xobj.get('/Matrix', [1, 0, 0, 1, 0, 0]))
        inner = mul(matrix, ctm)
        bbox = nums(xobj.get('/BBox', [0, 0, 0, 0]))
        corners = [apply(inner, bbox[0], bbox[1]), apply(inner, bbox[2], bbox[1]), apply(inner, bbox[0], bbox[3]), apply(inner, bbox[2], bbox[3])]
        if not meets((min(p[0] for p in corners), min(p[1] for p in corners), max(p[0] for p in corners), max(p[1] for p in corners)), self.boxes):
            return None
        own = xobj.get('/Resources', resources)
        instructions, changed = self.filter(pikepdf.parse_content_stream(xobj), own, inner, depth + 1)
        if not changed:
            return None
        copy = pikepdf.Stream(self.pdf, pikepdf.unparse_content_stream(instructions))
        for key in xobj.keys():
            if key not in ('/Length', '/Filter', '/DecodeParms'):
                copy[key] = xobj[key]
        self.copies += 1
        new_name = pikepdf.Name(f'/RdForm{self.copies}')
        # The page's (or form's) own resources: the copy must not reach other pages.
        xobjects[new_name] = copy
        return new_name


def own_resources(pdf, holder):
    """Gives `holder` (a page or form) a resources dictionary and XObject dictionary of its own."""
    res = holder.get('/Resources')
    mine = pikepdf.Dictionary({k: res[k] for k in res.keys()}) if res is not None else pikepdf.Dictionary()
    if '/XObject' in mine:
        xo = mine['/XObject']
        mine['/XObject'] = pikepdf.Dictionary({k: xo[k] for k in xo.keys()})
    holder['/Resources'] = mine
    return mine


def rect_of(annot):
    try:
        r = nums(annot.get('/Rect'))
        return (min(r[0], r[2]), min(r[1], r[3]), max(r[0], r[2]), max(r[1], r[3]))
    except Exception:  # noqa: BLE001 - a malformed rectangle is treated as covering nothing
        return None


def says(value, patterns):
    """Whether a PDF string holds a match of the patterns."""
    return value is not None and any(p.search(str(value)) for p in patterns)


def annotations(pdf, page, boxes, removed, patterns):
    """The page's annotations without those meeting a box (links too), attaching a file or whose
    text (/Contents, /T) matches, plus one Redact annotation per box; the removed ones' objects
    are added to `removed`."""
    kept = []
    for annot in page.obj.get('/Annots', []):
        rect = rect_of(annot)
        if (annot.get('/Subtype') == '/FileAttachment' or (rect is not None and meets(rect, boxes))
                or says(annot.get('/Contents'), patterns) or says(annot.get('/T'), patterns)):
            if annot.is_indirect:
                removed.add(annot.objgen)
            continue
        kept.append(annot)
    for box in boxes:
        kept.append(pdf.make_indirect(pikepdf.Dictionary(Type=pikepdf.Name.Annot, Subtype=pikepdf.Name.Redact, Rect=list(box))))
    return pikepdf.Array(kept)


def prune_fields(pdf, removed):
    """Drops from the form (AcroForm /Fields) the fields whose widget was removed: a field's
    value must not stay in the file once its widget over a box is gone."""
    acro = pdf.Root.get('/AcroForm')
    if acro is None or not removed:
        return

    def prune(fields, depth):
        kept = []
        for field in fields:
            if field.is_indirect and field.objgen in removed:
                continue
            kids = field.get('/Kids')
            if kids is not None and depth < MAX_FORM_DEPTH * 4:
                field['/Kids'] = pikepdf.Array(prune(kids, depth + 1))
                if len(field['/Kids']) == 0:
                    if field.is_indirect:
                        removed.add(field.objgen)
                    continue
            kept.append(field)
        return kept

    acro['/Fields'] = pikepdf.Array(prune(acro.get('/Fields', []), 0))


def redact_outline(pdf, patterns):
    """Bookmark titles: every match replaced by [redacted]."""
    if not patterns or '/Outlines' not in pdf.Root:
        return
    with pdf.open_outline() as outline:
        todo = [(item, 0) for item in outline.root]
        while todo:
            item, depth = todo.pop()
            title = item.title or ''
            for p in patterns:
                title = p.sub('[redacted]', title)
            item.title = title
            if depth < 64:
                todo += [(child, depth + 1) for child in item.children]


def remove_paths(source, work, boxes_by_page, patterns):
    """pikepdf pass: the vector paths and annotations meeting the boxes removed, file attachments
    removed, a Redact annotation added per box (for MuPDF's redaction); writes `work`.
    PyMuPDF 1.21's own annotation objects are not used: its bindings break after a few
    ("SwigPyObject has no attribute thisown")."""
    removed = set()
    with pikepdf.open(source) as pdf:
        for index, page in enumerate(pdf.pages):
            boxes = boxes_by_page.get(index, [])
            if boxes:
                flt = PathFilter(pdf, boxes)
                resources = own_resources(pdf, page.obj)
                instructions, changed = flt.filter(pikepdf.parse_content_stream(page), resources, [1, 0, 0, 1, 0, 0], 0)
                if changed:
                    page.obj['/Contents'] = pikepdf.Stream(pdf, pikepdf.unparse_content_stream(instructions))
            if boxes or '/Annots' in page.obj:
                page.obj['/Annots'] = annotations(pdf, page, boxes, removed, patterns)
        prune_fields(pdf, removed)
        redact_outline(pdf, patterns)
        pdf.save(work)


def text_boxes(page, patterns):
    """Character boxes (unrotated page space) of every match of the patterns, line by line."""
    found = []
    for block in page.get_text('rawdict')['blocks']:
        for line in block.get('lines', []):
            chars = [c for span in line['spans'] for c in span['chars']]
            text = ''.join(c['c'] for c in chars)
            for pattern in patterns:
                for m in pattern.finditer(text):
                    if m.end() == m.start():
                        continue
                    rect = fitz.Rect()
                    for c in chars[m.start():m.end()]:
                        rect |= fitz.Rect(c['bbox'])
                    if not rect.is_empty:
                        found.append(rect)
    return found


def scrub(doc):
    """Document-level scrub, by objects only (no page or annotation loaded after a redaction, see main)."""
    doc.set_metadata({})
    doc.del_xml_metadata()
    for name in doc.embfile_names():
        doc.embfile_del(name)
    cat = doc.pdf_catalog()
    for key in ('OpenAction', 'AA'):
        doc.xref_set_key(cat, key, 'null')
    names = doc.xref_get_key(cat, 'Names')
    if names[0] == 'xref':
        names_xref = int(names[1].split()[0])
        doc.xref_set_key(names_xref, 'JavaScript', 'null')
        doc.xref_set_key(names_xref, 'EmbeddedFiles', 'null')
    elif names[0] == 'dict':
        doc.xref_set_key(cat, 'Names/JavaScript', 'null')
        doc.xref_set_key(cat, 'Names/EmbeddedFiles', 'null')
    for number in range(doc.page_count):
        doc.xref_set_key(doc.page_xref(number), 'AA', 'null')


def find_boxes(source, spec, patterns):
    """Every box in MuPDF's unrotated page space (for the annotations) and in PDF user space (for the paths), by page index."""
    boxes = {}
    with fitz.open(source) as doc:
        for area in spec.get('areas') or []:
            if area['page'] > doc.page_count:
                raise PastLastPage(area['page'])
            page = doc[area['page'] - 1]
            shown = fitz.Rect(area['x'], area['y'], area['x'] + area['width'], area['y'] + area['height'])
            boxes.setdefault(page.number, []).append(shown * page.derotation_matrix)
        if patterns:
            for page in doc:
                for rect in text_boxes(page, patterns):
                    boxes.setdefault(page.number, []).append(rect)
        pdf_boxes = {}
        for number, rects in boxes.items():
            to_pdf = ~doc[number].transformation_matrix
            pdf_boxes[number] = [tuple(fitz.Rect(r * to_pdf).normalize()) for r in rects]
    return boxes, pdf_boxes


def main():
    source, target, spec_path, work = sys.argv[1:5]
    with open(spec_path, encoding='utf-8') as f:
        spec = json.load(f)
    flags = 0 if spec.get('match_case') else re.IGNORECASE
    try:
        patterns = [re.compile(re.escape(t), flags) for t in spec.get('text') or []]
        if spec.get('regex'):
            patterns.append(re.compile(spec['regex'], flags))
    except re.error as e:
        print(f'regex does not compile: {e}', file=sys.stderr)
        return 3
    try:
        boxes, pdf_boxes = find_boxes(source, spec, patterns)
    except PastLastPage as e:
        print(f'an area is on page {e} past the last page', file=sys.stderr)
        return 4
    except Exception as e:  # noqa: BLE001 - any failure to open is the input's fault
        print(f'not a readable PDF: {type(e).__name__}', file=sys.stderr)
        return 2
    try:
        remove_paths(source, work, pdf_boxes, patterns)
    except TooComplex as e:
        print(f'too complex to redact: {e}', file=sys.stderr)
        return 2
    doc = fitz.open(work)
    fill = tuple(spec.get('fill') or (0, 0, 0))
    for page in doc:
        rects = boxes.get(page.number)
        if rects:
            # MuPDF applies the page's Redact annotations (and deletes them); the boxes are filled after.
            if not page._apply_redactions(fitz.PDF_REDACT_IMAGE_PIXELS):
                print(f'redaction failed on page {page.number + 1}', file=sys.stderr)
                return 2
            shape = page.new_shape()
            for rect in rects:
                shape.draw_rect(rect)
                shape.finish(color=None, fill=fill, width=0)
            shape.commit()
    scrub(doc)
    doc.save(target, garbage=4, deflate=True, clean=True)
    print(json.dumps({'areas': sum(len(r) for r in boxes.values())}))
    return 0


if __name__ == '__main__':
    sys.exit(main())
