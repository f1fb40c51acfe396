"""What the notebooks share: build nexar-sim and nexar-live once, run them
in a scratch folder, and read what they write.

A notebook starts with

    import nexar_nb as nb
    tools = nb.Tools()

which builds both commands with `go build -o` into a temporary folder (as a
user would; Go's build cache makes the second notebook's build quick) and
makes a scratch folder for their outputs. Commands run in that folder with
relative paths, so what they print names no temporary path. A command that
fails raises CommandError with its output, which makes the cell an error
cell and the notebook's execution fail.

The readers accept the column names of results.csv and links.csv as they
were and as they are now (algbw_gbps or algbw_GB_per_s, links.csv's second
bytes or bytes_carried, ...) and give the frames the current names.
"""

import atexit
import io
import json
import pathlib
import shutil
import subprocess
import tempfile
import tomllib

import pandas as pd

# Current column names, by the older names a file may still carry. pandas
# reads links.csv's second "bytes" column (the bytes the link carried, after
# the collective's bytes) as "bytes.1".
_RENAMED = {
    "algbw_gbps": "algbw_GB_per_s",
    "busbw_gbps": "busbw_GB_per_s",
    "bandwidth_Bps": "bandwidth_bytes_per_s",
    "bytes.1": "bytes_carried",
}


class CommandError(RuntimeError):
    """A command of the notebook exited with a non-zero status."""


def repo_root(start=None):
    """The nexar-go checkout holding the notebooks (the folder with go.mod)."""
    here = pathlib.Path(start or pathlib.Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / "go.mod").is_file() and (d / "cmd" / "nexar-sim").is_dir():
            return d
    raise RuntimeError(f"no nexar-go checkout above {here}")


class Tools:
    """nexar-sim and nexar-live built once, and a scratch folder to run them in."""

    def __init__(self, keep=False):
        self.root = repo_root()
        self.work = pathlib.Path(tempfile.mkdtemp(prefix="nexar-notebook-"))
        if not keep:
            atexit.register(shutil.rmtree, self.work, ignore_errors=True)
        bin_dir = self.work / "bin"
        bin_dir.mkdir()
        self._run(["go", "build", "-o", str(bin_dir), "./cmd/nexar-sim", "./cmd/nexar-live"], cwd=self.root)
        self.sim_bin = bin_dir / "nexar-sim"
        self.live_bin = bin_dir / "nexar-live"

    def _run(self, argv, cwd=None, ok=(0,)):
        p = subprocess.run(argv, cwd=cwd or self.work, capture_output=True, text=True)
        if p.returncode not in ok:
            raise CommandError(
                f"{' '.join(map(str, argv))}: exit status {p.returncode}\n{p.stdout}\n{p.stderr}"
            )
        return p

    def _output(self, p):
        # Paths in the scratch folder as the relative paths they were given as.
        return (p.stdout + p.stderr).replace(f"{self.work}/", "")

    def sim(self, *args, ok=(0,)):
        """Runs nexar-sim ARGS in the scratch folder; returns its stdout and stderr together."""
        return self._output(self._run([str(self.sim_bin), *map(str, args)], ok=ok))

    def live(self, *args, ok=(0,)):
        """Runs nexar-live ARGS in the scratch folder; returns its stdout and stderr together."""
        return self._output(self._run([str(self.live_bin), *map(str, args)], ok=ok))

    def path(self, name):
        """A path in the scratch folder."""
        return self.work / name

    def write(self, name, text):
        """Writes a file (a scenario) into the scratch folder; returns its name."""
        p = self.work / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        return name

    def repo_file(self, rel):
        """A file of the checkout, such as scenarios/nexar-defaults-10gbe.toml."""
        return self.root / rel


def _renamed(df):
    return df.rename(columns={k: v for k, v in _RENAMED.items() if k in df.columns})


def read_csv(path):
    """Any CSV nexar-sim or nexar-live writes, columns under their current names."""
    return _renamed(pd.read_csv(path, keep_default_na=False))


def read_results(out_dir):
    """results.csv of a run's output folder."""
    return read_csv(pathlib.Path(out_dir) / "results.csv")


def read_links(out_dir):
    """links.csv of a run's output folder (nexar-sim run --links)."""
    return read_csv(pathlib.Path(out_dir) / "links.csv")


def read_crossovers(out_dir):
    """crossovers.csv of a run's output folder."""
    return read_csv(pathlib.Path(out_dir) / "crossovers.csv")


def read_json(path):
    """A JSON file (results.json); its rows' keys under their current names."""
    with open(path) as f:
        doc = json.load(f)
    for row in doc.get("rows") or []:
        for old, new in _RENAMED.items():
            if old in row:
                row[new] = row.pop(old)
    return doc


def read_toml(path):
    """A TOML file (a scenario, tuning.toml) as a dict."""
    with open(path, "rb") as f:
        return tomllib.load(f)


def toml_value(v):
    """v written as a TOML value: strings, numbers, booleans and lists of them."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a TOML basic string
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"no TOML for {v!r}")


def toml_table(header, table):
    """The [header] table (or [[header]] when header starts with '[') of the dict's plain keys."""
    out = io.StringIO()
    out.write(f"[{header}]\n")
    for k, v in table.items():
        if not isinstance(v, dict):
            out.write(f"{k} = {toml_value(v)}\n")
    return out.getvalue()


def network_toml(network):
    """A scenario's [network] table (and its [network.transport]) written back."""
    text = toml_table("network", network)
    if isinstance(network.get("transport"), dict):
        text += "\n" + toml_table("network.transport", network["transport"])
    return text


def size(n):
    """Bytes as nexar's tables print them: 8 MiB, 512 KiB, 96 B, 1.5 MiB."""
    n = float(n)
    for unit, f in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= f:
            v = n / f
            return f"{v:.0f} {unit}" if v == round(v) else f"{v:.3g} {unit}"
    return f"{n:.0f} B"


def pct(x):
    """A ratio's excess as a percentage: 1.234 -> '23.4%'."""
    return f"{(x - 1) * 100:.1f}%"
