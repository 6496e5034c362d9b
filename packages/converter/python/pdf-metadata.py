"""Sets a PDF's title and author, for the converter's `title` and `author` options.

Run in the engine sandbox by pdf-operations.ts:
  `python3 pdf-metadata.py INPUT OUTPUT TITLE-OR-'' AUTHOR-OR-'' SET-TITLE(0|1) SET-AUTHOR(0|1)`.
Uses pikepdf (Debian's python3-pikepdf, on qpdf): the document information dictionary and
the XMP metadata (dc:title, dc:creator) are written together, so a PDF/A step after this
one finds them consistent. Nothing else of the file changes. Exit 0 on success; 2 with a
message on stderr when the input is not a PDF pikepdf can open.
"""
import sys

import pikepdf


def main():
    source, target, title, author, set_title, set_author = sys.argv[1:7]
    try:
        pdf = pikepdf.open(source)
    except Exception as e:  # noqa: BLE001 - any failure to open is the input's fault
        print(f'not a readable PDF: {type(e).__name__}', file=sys.stderr)
        return 2
    with pdf:
        with pdf.open_metadata(set_pikepdf_as_editor=False) as meta:
            if set_title == '1':
                meta['dc:title'] = title
            if set_author == '1':
                meta['dc:creator'] = [author]
        pdf.save(target)
    return 0


if __name__ == '__main__':
    sys.exit(main())
