"""Checks a notebook that run.sh executed against the one committed.

Usage: nbcheck.py COMMITTED.ipynb EXECUTED.ipynb [--update]

Fails (exit status 1, saying what and where) when the executed notebook has
an error output or a stderr stream (warnings included), a code cell left
unexecuted or run out of order, or an output naming a temporary or checkout
path; or when its outputs differ from the committed ones. How they must
agree is the notebook's metadata "nexar": {"outputs": ...}:

  exact     (the simulator's notebooks, deterministic) every code cell's
            text outputs (printed text, tables) equal the committed ones,
            and its figures are as many, of the same kinds. Figure bytes
            are not compared: they change with matplotlib's version and
            fonts; the numbers a notebook concludes from are printed.
  measured  (measurements on this machine, which vary run to run) every
            code cell has outputs of the same kinds (text, table, figure)
            as the committed ones; the values are not compared.

The committed notebook must itself have been executed top to bottom (its
execution counts 1, 2, 3, ...), as run.sh --update leaves it. With
--update, an executed notebook that passes every check but agreement is
written over the committed one.
"""

import difflib
import os
import sys
import tempfile

import nbformat

MODES = ("exact", "measured")
TEXT_TYPES = ("text/plain", "text/html", "text/markdown", "text/latex")


def text(v):
    return "".join(v) if isinstance(v, list) else v


def outputs(cell, values):
    """A code cell's outputs as comparable items: consecutive streams of one
    name joined (how prints are split into messages varies), rich outputs as
    their MIME types, with their text when values is set."""
    items = []
    for o in cell.get("outputs", []):
        kind = o["output_type"]
        if kind == "stream":
            if items and items[-1][0] == "stream" and items[-1][1] == o["name"]:
                if values:
                    items[-1] = ("stream", o["name"], items[-1][2] + text(o["text"]))
                continue
            items.append(("stream", o["name"], text(o["text"]) if values else ""))
        elif kind in ("execute_result", "display_data"):
            data = o.get("data", {})
            mimes = tuple(sorted(data))
            body = "".join(f"--- {m}\n{text(data[m])}\n" for m in mimes if m in TEXT_TYPES) if values else ""
            items.append((kind, mimes, body))
        else:
            items.append((kind, o.get("ename", ""), text(o.get("evalue", ""))))
    return items


def printed(o):
    """What an output shows as text (figures left out)."""
    if o["output_type"] == "stream":
        return text(o["text"])
    if o["output_type"] == "error":
        return text(o.get("evalue", "")) + "".join(o.get("traceback", []))
    return "".join(text(v) for m, v in o.get("data", {}).items() if m in TEXT_TYPES)


def render(items):
    lines = []
    for kind, what, body in items:
        lines.append(f"[{kind} {what if isinstance(what, str) else ', '.join(what)}]")
        lines.extend(body.splitlines())
    return lines


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def check_executed(nb, name, forbidden):
    problems = []
    for i, c in enumerate(code_cells(nb), 1):
        if c.get("execution_count") != i:
            problems.append(f"{name}: code cell {i} has execution count {c.get('execution_count')}, want {i} (run the notebook top to bottom)")
        for o in c.get("outputs", []):
            if o["output_type"] == "error":
                problems.append(f"{name}: code cell {i} raised {o.get('ename')}: {o.get('evalue')}")
            if o["output_type"] == "stream" and o.get("name") == "stderr":
                problems.append(f"{name}: code cell {i} wrote to stderr: {text(o['text']).strip()[:300]}")
            blob = printed(o)
            for f in forbidden:
                if f and f in blob:
                    problems.append(f"{name}: code cell {i} prints the path {f!r}: print paths relative to the scratch folder or the checkout")
    return problems


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    update = "--update" in argv
    if len(args) != 2 or any(a not in ("--update",) for a in argv if a.startswith("--")):
        print("usage: nbcheck.py COMMITTED.ipynb EXECUTED.ipynb [--update]", file=sys.stderr)
        return 2
    committed_path, executed_path = args
    committed = nbformat.read(committed_path, as_version=4)
    executed = nbformat.read(executed_path, as_version=4)
    mode = committed.metadata.get("nexar", {}).get("outputs")
    if mode not in MODES:
        print(f"{committed_path}: metadata nexar.outputs is {mode!r}, want one of {', '.join(MODES)}", file=sys.stderr)
        return 1

    root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
    forbidden = [root, tempfile.gettempdir().rstrip("/") + "/", "nexar-notebook-", os.path.expanduser("~") + "/"]
    problems = check_executed(executed, executed_path, forbidden)
    if not update:
        problems += check_executed(committed, committed_path, [])
        old, new = code_cells(committed), code_cells(executed)
        if [c.source for c in old] != [c.source for c in new]:
            problems.append(f"{executed_path}: its code is not the committed notebook's")
        else:
            for i, (a, b) in enumerate(zip(old, new), 1):
                want, got = outputs(a, mode == "exact"), outputs(b, mode == "exact")
                if want != got:
                    diff = difflib.unified_diff(render(want), render(got), "committed", "re-executed", lineterm="", n=2)
                    problems.append(
                        f"{committed_path}: code cell {i} re-executes with other outputs ({mode}); "
                        f"run notebooks/run.sh --update {committed_path} if the change is meant:\n  "
                        + "\n  ".join(list(diff)[:60])
                    )
                    break
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    if update:
        executed.metadata = committed.metadata | {k: v for k, v in executed.metadata.items() if k != "nexar"}
        nbformat.write(executed, committed_path)
        print(f"{committed_path}: updated with its outputs")
    else:
        print(f"{committed_path}: re-executes cleanly ({mode} outputs)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
