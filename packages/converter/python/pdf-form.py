"""Fills a PDF's AcroForm (`form_data`) or clears what flattening left (`flatten`).

Run in the engine sandbox by form-operations.ts:
  `python3 pdf-form.py fill INPUT OUTPUT` with `{"<full field name>": value, …}` on stdin;
  `python3 pdf-form.py tidy INPUT OUTPUT` after qpdf's --flatten-annotations=all.
Uses pikepdf (Debian's python3-pikepdf, on qpdf). The values were checked by the service
against this PDF's fields (pdf-info.py's facts) before this runs; they are checked again here,
since this is the code that writes them. `fill` sets each field's /V, the /AS of check box and
radio widgets (the on-state or /Off) and /NeedAppearances, so that qpdf's
--generate-appearances, run next, draws the text and choice values into every widget.
`tidy` removes an /AcroForm that flattening left and widgets it did not draw (hidden ones):
no field remains. Exit 0 on success; 2 with a message on stderr (the input is not a PDF
pikepdf can open, or a value does not fit its field).
"""
import importlib.util
import json
import os
import sys

from pikepdf import Array, Dictionary, Name, String

_spec = importlib.util.spec_from_file_location('pdf_info', os.path.join(os.path.dirname(os.path.abspath(__file__)), 'pdf-info.py'))
info = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(info)


class Unfit(Exception):
    """A value that does not fit its field."""


def set_state(widgets, state):
    for w in widgets:
        ap = w.get('/AP')
        normal = ap.get('/N') if isinstance(ap, Dictionary) else None
        has = isinstance(normal, Dictionary) and Name('/' + state) in normal
        w.AS = Name('/' + state) if has else Name.Off


def fill_field(name, field, widgets, value, pages):
    described = info.describe_field(name, field, widgets, pages)
    if described is None or described['type'] in ('button', 'signature'):
        raise Unfit(f'{name}: not a fillable field')
    kind = described['type']
    if kind == 'text':
        if not isinstance(value, str):
            raise Unfit(f'{name}: a text field takes a string')
        field.V = String(value)
    elif kind in ('checkbox', 'radio'):
        states, options = described['states'], described['options']
        if value is False:
            state = 'Off'
        elif value is True and kind == 'checkbox' and states:
            state = states[0]
        elif isinstance(value, str) and value in states:
            state = value
        elif isinstance(value, str) and value in options:
            state = states[options.index(value)]
        else:
            raise Unfit(f'{name}: not one of its states')
        field.V = Name('/' + state)
        set_state(widgets, state)
    else:
        options = described['options']
        picked = value if isinstance(value, list) else [value]
        if not picked or not all(isinstance(v, str) and v in options for v in picked):
            raise Unfit(f'{name}: not one of its options')
        if len(picked) > 1 and not described.get('multi_select'):
            raise Unfit(f'{name}: takes one option')
        field.V = String(picked[0]) if len(picked) == 1 else Array([String(v) for v in picked])
        # /I (a list's selected indices) would contradict the new value: set anew, or dropped.
        if kind == 'list':
            field.I = Array(sorted(options.index(v) for v in picked))
        elif '/I' in field:
            del field['/I']


def fill(pdf, values):
    pages = info.widget_pages(pdf)
    by_name = {name: (field, widgets) for name, field, widgets in info.terminal_fields(pdf)}
    unknown = [n for n in values if n not in by_name]
    if unknown:
        raise Unfit(f'unknown fields: {", ".join(unknown)[:300]}')
    for name, value in values.items():
        field, widgets = by_name[name]
        fill_field(name, field, widgets, value, pages)
    pdf.Root.AcroForm.NeedAppearances = True


def tidy(pdf):
    if '/AcroForm' in pdf.Root:
        del pdf.Root['/AcroForm']
    for page in pdf.pages:
        annots = page.obj.get('/Annots')
        if not isinstance(annots, Array):
            continue
        kept = [a for a in annots if not (isinstance(a, Dictionary) and a.get('/Subtype') == '/Widget')]
        if len(kept) != len(annots):
            page.obj.Annots = Array(kept)


def main():
    mode, source, target = sys.argv[1:4]
    values = json.load(sys.stdin) if mode == 'fill' else None
    pdf = info.open_pdf(source)
    if pdf is None:
        return 2
    with pdf:
        try:
            if mode == 'fill':
                fill(pdf, values)
            else:
                tidy(pdf)
        except Unfit as e:
            print(str(e), file=sys.stderr)
            return 2
        pdf.save(target)
    return 0


if __name__ == '__main__':
    sys.exit(main())
