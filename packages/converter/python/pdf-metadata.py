"""Sets a PDF's metadata, for the converter's `title`, `author` and `metadata` options.

Run in the engine sandbox by pdf-operations.ts:
  `python3 pdf-metadata.py INPUT OUTPUT` with the entries to set as JSON on stdin:
  `{"title": …, "author": …, "subject": …, "keywords": [...], "creator": …, "producer": …,
  "created": ISO 8601, "modified": ISO 8601}` (each optional; the service checked them).
Uses pikepdf (Debian's python3-pikepdf, on qpdf): each entry is written to the XMP metadata
and pikepdf writes the information dictionary from it (open_metadata's update_docinfo), so
the two agree and a PDF/A step after this one finds them consistent. Keywords are joined with
", " for /Keywords and pdf:Keywords, and listed one by one in dc:subject. Nothing else of the
file changes. Exit 0 on success; 2 with a message on stderr when the input is not a PDF
pikepdf can open.
"""
import json
import sys

import pikepdf

# Our names -> the XMP property pikepdf maps onto the information dictionary's entry.
XMP = {'title': 'dc:title', 'subject': 'dc:description', 'creator': 'xmp:CreatorTool',
       'producer': 'pdf:Producer', 'created': 'xmp:CreateDate', 'modified': 'xmp:ModifyDate'}


def main():
    source, target = sys.argv[1:3]
    entries = json.load(sys.stdin)
    try:
        pdf = pikepdf.open(source)
    except Exception as e:  # noqa: BLE001 - any failure to open is the input's fault
        print(f'not a readable PDF: {type(e).__name__}', file=sys.stderr)
        return 2
    with pdf:
        with pdf.open_metadata(set_pikepdf_as_editor=False) as meta:
            for key, prop in XMP.items():
                if entries.get(key) is not None:
                    meta[prop] = entries[key]
            if entries.get('author') is not None:
                meta['dc:creator'] = [entries['author']]
            if entries.get('keywords'):
                meta['pdf:Keywords'] = ', '.join(entries['keywords'])
                meta['dc:subject'] = list(entries['keywords'])
        pdf.save(target)
    return 0


if __name__ == '__main__':
    sys.exit(main())
