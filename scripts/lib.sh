# Shared helpers for the scripts in this folder (sourced, not run).
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"

# Installs the Debian packages the build needs, and any named as arguments, when any is missing.
ensure_system_packages() {
  local missing=()
  for package in libssl-dev zlib1g-dev libnats-dev pkg-config openssl "$@"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
  if ((${#missing[@]})); then
    echo "installing: ${missing[*]}" >&2
    local sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

# Python 3 virtualenv for the real-client tests (websockets, firebase-admin, pytest).
ensure_python_env() {
  local venv="$REPO_ROOT/.venv"
  if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
  fi
  # Reinstall whenever the pinned requirements change (a stamp holds the hash of the last installed list).
  local wanted stamp="$venv/.requirements.sha256"
  wanted=$(sha256sum "$REPO_ROOT/Tests/Python/requirements.txt" | cut -d' ' -f1)
  if [[ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]]; then
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$REPO_ROOT/Tests/Python/requirements.txt"
    echo "$wanted" > "$stamp"
  fi
  PYTHON="$venv/bin/python"
}
