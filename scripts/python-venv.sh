# Sourced by the scripts that run Python checks (fuzz.sh, consumer-tests.sh): defines
#   python_venv VENV REQUIREMENTS LABEL
# which (re)makes VENV with exactly the pinned REQUIREMENTS whenever they or the Python change,
# saying "LABEL: installing REQUIREMENTS into VENV" when it does.
python_venv() {
  local venv=$1 requirements=$2 label=$3 stamp
  stamp=$({ cat "$requirements"; python3 --version; } | sha256sum | cut -d' ' -f1)
  if [ "$(cat "$venv/.requirements-sha256" 2>/dev/null)" != "$stamp" ]; then
    echo "$label: installing $requirements into $venv" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input -r "$requirements"
    echo "$stamp" >"$venv/.requirements-sha256"
  fi
}
