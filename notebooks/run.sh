#!/usr/bin/env bash
# Executes the notebooks headlessly and checks that they re-execute cleanly.
#
#   notebooks/run.sh [--update] [NOTEBOOK.ipynb...]     (default: every notebook)
#
# Installs what the notebooks need from Debian's packages when it is missing
# (Jupyter's nbconvert, the IPython kernel, pandas, matplotlib; with apt-get,
# as root or through sudo), then runs each notebook top to bottom with
# `jupyter nbconvert --execute` into a scratch folder and holds the result
# against the committed notebook (notebooks/nbcheck.py): no error cell, no
# stderr output, no temporary path printed, and the same outputs; exactly
# for the simulator's notebooks, of the same kinds for the measuring one
# (its metadata says which). --update writes the executed notebooks over the
# committed ones instead of comparing (do it after changing a notebook or
# what it runs, and commit the result).
#
# Exit status: 0 when every notebook passed; 1 when one failed; 2 for bad
# usage or when the packages cannot be installed.
set -euo pipefail
cd "$(dirname "$0")/.."

update=()
notebooks=()
for arg in "$@"; do
	case $arg in
	--update) update=(--update) ;;
	-h | --help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*.ipynb) notebooks+=("$arg") ;;
	*) echo "notebooks/run.sh: unknown argument $arg (see --help)" >&2; exit 2 ;;
	esac
done
if [ ${#notebooks[@]} -eq 0 ]; then
	notebooks=(notebooks/*.ipynb)
fi

# Debian's Jupyter runs on Debian's Python, whatever python3 comes first on
# PATH (pyenv, a virtual environment); the kernel it starts is the same one.
py=/usr/bin/python3
packages=(jupyter-nbconvert python3-nbconvert python3-nbclient python3-nbformat
	python3-ipykernel python3-pandas python3-matplotlib)
missing=()
for p in "${packages[@]}"; do
	if [ "$(dpkg-query -W -f '${db:Status-Status}' "$p" 2>/dev/null)" != installed ]; then
		missing+=("$p")
	fi
done
if [ ${#missing[@]} -gt 0 ]; then
	. scripts/apt-install.sh
	apt_install notebooks/run.sh "${missing[@]}"
fi
if ! "$py" -c 'import tomllib, nbclient, ipykernel, pandas, matplotlib' 2>/dev/null; then
	echo "notebooks/run.sh: $py lacks tomllib (Python 3.11 or later), nbclient, ipykernel, pandas or matplotlib" >&2
	exit 2
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export PYTHONDONTWRITEBYTECODE=1 # no __pycache__ beside the notebooks
export PYDEVD_DISABLE_FILE_VALIDATION=1 # no debugger warning from every kernel start
failed=0
for nb in "${notebooks[@]}"; do
	echo "== $nb"
	start=$SECONDS
	name=$(basename "$nb")
	if ! "$py" -m nbconvert --to notebook --execute --log-level=WARN \
		--ExecutePreprocessor.timeout=600 --ExecutePreprocessor.record_timing=False \
		--output-dir "$scratch" --output "$name" "$nb"; then
		echo "$nb: execution failed (the error is above)" >&2
		failed=1
		continue
	fi
	if ! "$py" notebooks/nbcheck.py "$nb" "$scratch/$name" "${update[@]}"; then
		failed=1
	fi
	echo "   $((SECONDS - start))s"
done
exit $failed
