"""UNO client for one warm LibreOffice instance of @mailconv/converter's pool.

Node starts soffice.bin listening on a named pipe, then this script, which connects to it
and reads one JSON job per line on stdin, answering one JSON line per job on stdout.
It runs as Debian's /usr/bin/python3 with the python3-uno bridge. It never launches
LibreOffice itself: Node owns the soffice process, its time-outs and its recycling.

Job:    {"id", "input", "output", "filter", "inputFilter"?, "inputOptions"?,
         "filterOptions"?, "filterData"?: {name: value}, "title"?}
Answer: {"id", "ok": true} or {"id", "ok": false, "error": "..."}
"""
import json
import sys
import time

import uno
from com.sun.star.beans import PropertyValue
from com.sun.star.connection import NoConnectException

# com.sun.star.document.MacroExecMode.NEVER_EXECUTE and UpdateDocMode.NO_UPDATE: documents
# never run macros and never refresh links (no fetch of linked images or external data).
NEVER_EXECUTE = 0
NO_UPDATE = 0


def prop(name, value):
    p = PropertyValue()
    p.Name = name
    p.Value = value
    return p


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def connect(pipe, timeout_s):
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return resolver.resolve("uno:pipe,name=%s;urp;StarOffice.ComponentContext" % pipe)
        except NoConnectException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def convert(desktop, job):
    load = [prop("Hidden", True), prop("ReadOnly", True),
            prop("MacroExecutionMode", NEVER_EXECUTE), prop("UpdateDocMode", NO_UPDATE)]
    if job.get("inputFilter"):
        load.append(prop("FilterName", job["inputFilter"]))
    if job.get("inputOptions"):
        load.append(prop("FilterOptions", job["inputOptions"]))
    doc = desktop.loadComponentFromURL(uno.systemPathToFileUrl(job["input"]), "_blank", 0, tuple(load))
    if doc is None:
        raise RuntimeError("LibreOffice could not open the document")
    try:
        if job.get("title"):
            # The loaded copy only (opened read-only, never stored back): what the export writes.
            doc.DocumentProperties.Title = job["title"]
        store = [prop("FilterName", job["filter"]), prop("Overwrite", True)]
        if job.get("filterOptions"):
            store.append(prop("FilterOptions", job["filterOptions"]))
        data = job.get("filterData") or {}
        if data:
            values = tuple(prop(k, v) for k, v in data.items())
            store.append(prop("FilterData", uno.Any("[]com.sun.star.beans.PropertyValue", values)))
        uno.invoke(doc, "storeToURL", (uno.systemPathToFileUrl(job["output"]), tuple(store)))
    finally:
        try:
            doc.close(True)
        except Exception:
            doc.dispose()


def main():
    pipe = sys.argv[1]
    timeout_s = float(sys.argv[2]) if len(sys.argv) > 2 else 30.0
    ctx = connect(pipe, timeout_s)
    desktop = ctx.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)
    send({"ready": True})
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        job = json.loads(line)
        try:
            convert(desktop, job)
            send({"id": job["id"], "ok": True})
        except Exception as e:  # every failure goes back to Node as data
            send({"id": job["id"], "ok": False, "error": "%s: %s" % (type(e).__name__, e)})


if __name__ == "__main__":
    main()
