"""Lists an archive's entries as structured data, for the converter's archive guard.

Run in the engine sandbox by guards/archive-guard.ts: `python3 archive-list.py ARCHIVE MAX`.
Reads the archive with libarchive (python3-libarchive-c, the library bsdtar is built on)
and writes one JSON object per entry on stdout:
  {"path": "...", "type": "file|dir|symlink|hardlink|fifo|char|block|socket|other",
   "size": N or null, "link": "..." or null}
Names and link targets are the archive's raw bytes decoded as UTF-8 with replacement, so
no name can forge a field or a line. After MAX entries it writes {"more": true} and stops.
Exit 0 when the whole listing was read; 2 with a message on stderr when the archive is
damaged or not an archive.
"""
import json
import sys

import libarchive
from libarchive import ffi


def text(raw):
    return None if raw is None else raw.decode('utf-8', 'replace')


def kind(entry):
    # A hard link is a regular-file header that names another entry; libarchive says so apart.
    if entry.islnk:
        return 'hardlink'
    if entry.issym:
        return 'symlink'
    if entry.isdir:
        return 'dir'
    if entry.isreg:
        return 'file'
    if entry.isfifo:
        return 'fifo'
    if entry.ischr:
        return 'char'
    if entry.isblk:
        return 'block'
    if entry.issock:
        return 'socket'
    return 'other'


def main():
    path, limit = sys.argv[1], int(sys.argv[2])
    out = sys.stdout
    count = 0
    try:
        with libarchive.file_reader(path) as archive:
            for entry in archive:
                if count >= limit:
                    out.write('{"more": true}\n')
                    return 0
                p = entry._entry_p
                link = ffi.entry_hardlink(p) if entry.islnk else ffi.entry_symlink(p) if entry.issym else None
                size = ffi.entry_size(p) if ffi.entry_size_is_set(p) else None
                out.write(json.dumps({'path': text(ffi.entry_pathname(p)), 'type': kind(entry), 'size': size, 'link': text(link)}) + '\n')
                count += 1
    except libarchive.ArchiveError as e:
        sys.stderr.write(f'not a readable archive: {e}\n')
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
