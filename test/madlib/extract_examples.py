#!/usr/bin/env python3
r"""Extract the SQL examples of Apache MADlib's deep-learning user documentation.

The user docs are Doxygen comments in src/ports/postgres/modules/deep_learning/*.sql_in. Their
Examples section is a sequence of <pre class="example"> blocks (SQL to run, or the Python that
builds a Keras model, which is not run), each optionally followed by a <pre class="result"> block
(psql's output as MADlib documents it). Doxygen escapes: "\\x on" is psql's "\x on", "\#" a "#"
(Python comments in PL/Python bodies); \verbatim / \endverbatim only fence text inside a block.

Usage: extract_examples.py DOC.sql_in OUTDIR
Writes OUTDIR/NNN.sql (the example, unchanged but for Doxygen's escapes) and, when documented,
OUTDIR/NNN.expected (the result block), and prints one line per SQL example: NNN <first line>.
Python blocks are skipped (they are not SQL: MADlib's users run them in Python).
"""
import html
import os
import re
import sys

SQL_START = re.compile(r'^\s*(SELECT|DROP|CREATE|INSERT|UPDATE|DELETE|ALTER|WITH|COPY|SET|TRUNCATE|\\\\?[a-z])',
                       re.IGNORECASE)


def blocks(text):
    """(kind, body) for every <pre class="..."> block after the Examples anchor, in order."""
    start = re.search(r'@anchor\s+(examples?|keras_examples)\b', text)
    if not start:
        return []
    end = re.search(r'@anchor\s+(notes|background|literature|related|technical\w*)\b', text[start.end():])
    section = text[start.end(): start.end() + end.start()] if end else text[start.end():]
    out = []
    for m in re.finditer(r'<pre class="(example|result)">\n?(.*?)</pre>', section, re.DOTALL):
        out.append((m.group(1), m.group(2)))
    return out


def unescape(body):
    body = body.replace('\\\\', '\\').replace('\\#', '#')
    body = re.sub(r'^\s*\\(end)?verbatim\s*$\n?', '', body, flags=re.MULTILINE)
    return html.unescape(body)


def is_sql(body):
    for line in body.splitlines():
        if line.strip() and not line.strip().startswith('--'):
            return bool(SQL_START.match(line))
    return False


def main():
    doc, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    with open(doc, encoding='utf-8') as f:
        items = blocks(f.read())
    n = 0
    pending = None
    for kind, body in items:
        body = unescape(body)
        if kind == 'example':
            pending = None
            if not is_sql(body):
                continue
            n += 1
            pending = os.path.join(outdir, '%03d' % n)
            with open(pending + '.sql', 'w', encoding='utf-8') as f:
                f.write(body)
            first = next((l.strip() for l in body.splitlines() if l.strip() and not l.strip().startswith('--')), '')
            print('%03d %s' % (n, first[:100]))
        elif pending:
            with open(pending + '.expected', 'a', encoding='utf-8') as f:
                f.write(body)
            pending = None


if __name__ == '__main__':
    main()
