"""PDF/A and PDF/UA helpers of the converter's `pdfa` and `pdf_ua` options (pdf-archive.ts).

Run in the engine sandbox with Debian's python3-pikepdf (on qpdf):

  `python3 pdf-archive.py ua INPUT OUTPUT LANGUAGE-OR-''`
      Checks what PDF/UA needs of a PDF LibreOffice tagged: a structure tree, /MarkInfo
      /Marked true and a title (information dictionary or XMP dc:title, not blank); sets
      the catalog's /Lang when a language is given and /ViewerPreferences /DisplayDocTitle.
      Only those catalog entries change, so a PDF/A claim beside it stays true.
  `python3 pdf-archive.py transparency INPUT`
      Whether any page uses transparency (constant alpha below 1, soft masks, blend modes,
      transparency groups), which PDF/A-1 forbids; prints the first such page (1-based).

Exit codes: 0 done (transparency: none found); 2 not a PDF pikepdf can open; 3 untagged;
4 no title; 5 transparency found.
"""
import sys

import pikepdf
from pikepdf import Name

# Resources are walked at most this deep (forms inside forms): a hostile PDF may nest them endlessly.
MAX_DEPTH = 12


def blank(value):
    return value is None or str(value).strip() == ''


def ua(pdf, output, language):
    root = pdf.Root
    mark = root.get('/MarkInfo')
    if '/StructTreeRoot' not in root or mark is None or not bool(mark.get('/Marked', False)):
        print('the PDF is not tagged', file=sys.stderr)
        return 3
    with pdf.open_metadata(set_pikepdf_as_editor=False, update_docinfo=False) as meta:
        xmp_title = meta.get('dc:title')
    info_title = pdf.docinfo.get('/Title') if '/Info' in pdf.trailer else None
    if blank(info_title) and blank(xmp_title):
        print('the PDF has no title', file=sys.stderr)
        return 4
    if language:
        root.Lang = pikepdf.String(language)
    prefs = root.get('/ViewerPreferences')
    if prefs is None:
        root.ViewerPreferences = pikepdf.Dictionary(DisplayDocTitle=True)
    else:
        prefs.DisplayDocTitle = True
    pdf.save(output)
    return 0


def values(dictionary):
    if not isinstance(dictionary, pikepdf.Dictionary):
        return []
    return [dictionary[key] for key in dictionary.keys()]


def transparent_resources(resources, seen, depth):
    """Whether these resources (and the forms they hold) draw anything transparent."""
    if not isinstance(resources, pikepdf.Dictionary) or depth > MAX_DEPTH:
        return False
    key = resources.objgen
    if key != (0, 0):
        if key in seen:
            return False
        seen.add(key)
    for gs in values(resources.get('/ExtGState')):
        if not isinstance(gs, pikepdf.Dictionary):
            continue
        for alpha in ('/CA', '/ca'):
            if alpha in gs and float(gs[alpha]) < 1:
                return True
        if gs.get('/SMask', Name.None_) != Name.None_:
            return True
        if gs.get('/BM', Name.Normal) not in (Name.Normal, Name.Compatible):
            return True
    for xobject in values(resources.get('/XObject')):
        if not isinstance(xobject, pikepdf.Stream):
            continue
        # A form drawn from many places is read once: shared forms must not multiply the walk.
        if xobject.objgen in seen:
            continue
        seen.add(xobject.objgen)
        if '/SMask' in xobject or int(xobject.get('/SMaskInData', 0)) > 0:
            return True
        group = xobject.get('/Group')
        if isinstance(group, pikepdf.Dictionary) and group.get('/S') == Name.Transparency:
            return True
        if xobject.get('/Subtype') == Name.Form and transparent_resources(xobject.get('/Resources'), seen, depth + 1):
            return True
    return False


def transparency(pdf):
    for number, page in enumerate(pdf.pages, start=1):
        group = page.obj.get('/Group')
        if (isinstance(group, pikepdf.Dictionary) and group.get('/S') == Name.Transparency) or transparent_resources(page.obj.get('/Resources'), set(), 0):
            print(number)
            return 5
    return 0


def main():
    command, source = sys.argv[1], sys.argv[2]
    try:
        pdf = pikepdf.open(source)
    except Exception as e:  # noqa: BLE001 - any failure to open is the input's fault
        print(f'not a readable PDF: {type(e).__name__}', file=sys.stderr)
        return 2
    with pdf:
        if command == 'ua':
            return ua(pdf, sys.argv[3], sys.argv[4])
        if command == 'transparency':
            return transparency(pdf)
    print(f'unknown command {command}', file=sys.stderr)
    return 64


if __name__ == '__main__':
    sys.exit(main())
