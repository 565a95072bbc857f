#!/usr/bin/env bash
# gpuwhy on a real NVIDIA GPU, end to end, in under 8 minutes and without a network
# (docs/gpu-check.md): `gpuwhy devices`, then three short PyTorch jobs recorded through the
# Python binding -- a healthy matmul loop, the same loop with a slow data loader, a loop of
# thousands of tiny kernels -- with the top finding of each, the cost of the step markers
# against the real step time, and exit status 1 when a verdict is wrong; then gpuwhy.torch's
# CUDA-event phase timing on a short matmul loop (scripts/gpu_check_torch.py).
#
#   scripts/gpu-check.sh [--bin DIR] [--out DIR] [--seconds N] [--jobs LIST] [--dry-run]
#
# --bin DIR (or GPUWHY_BIN_DIR): a directory holding the `gpuwhy` CLI and libgpuwhy.so built
#   beforehand; without it the script builds them with cargo (release) when cargo is there.
# --out DIR: where the reports go (default: a new directory under /tmp, printed at the end).
# --seconds N: recording time of each job (default 25; the dry run's default is 6).
# --jobs LIST: a comma-separated subset of healthy,starved,tiny.
# --dry-run: no GPU and no PyTorch: the simulated GPU plays the scenario each job stands for
#   (healthy, data_starvation, launch_bound) and sleep/spin stand-ins replace PyTorch; the
#   same verdict checks apply. CI runs this (ffi/tests/gpu_check.rs). With --scenario
#   JOB=SCENARIO the simulator plays another bundled scenario for JOB (to see a check fail).
# Exit status: 0 every verdict right; 1 a verdict wrong or a job failed; 2 the setup failed;
# 3 inconclusive: a verdict missed while the machine's CPUs were saturated.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${GPUWHY_BIN_DIR:-}
out=
seconds=
jobs=healthy,starved,tiny
dry=0
python=${PYTHON:-python3}
extra=()

die() {
    echo "gpu-check: $*" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case $1 in
    --bin) bin=${2:?--bin needs a directory}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
    --jobs) jobs=${2:?--jobs needs a list}; shift 2 ;;
    --dry-run) dry=1; shift ;;
    --scenario) extra+=(--scenario "${2:?--scenario needs JOB=SCENARIO}"); shift 2 ;;
    -h | --help) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
done

[ ${#extra[@]} -eq 0 ] || [ $dry = 1 ] || die "--scenario needs --dry-run"
if [ -z "$bin" ]; then
    command -v cargo >/dev/null ||
        die "no binaries: pass --bin DIR (or set GPUWHY_BIN_DIR) with gpuwhy and libgpuwhy.so, or install cargo"
    echo "gpu-check: building gpuwhy (cargo build --release -p gpuwhy-cli -p gpuwhy-ffi)..."
    (cd "$root" && cargo build --release -p gpuwhy-cli -p gpuwhy-ffi) || die "the build failed"
    bin=$root/target/release
fi
[ -d "$bin" ] || die "no directory $bin"
bin=$(cd "$bin" && pwd)
[ -x "$bin/gpuwhy" ] || die "no gpuwhy executable in $bin"
[ -f "$bin/libgpuwhy.so" ] || die "no libgpuwhy.so in $bin"
command -v "$python" >/dev/null || die "no $python"
[ -n "$out" ] || out=$(mktemp -d "${TMPDIR:-/tmp}/gpuwhy-check.XXXXXX")
mkdir -p "$out"
out=$(cd "$out" && pwd)
[ -n "$seconds" ] || { [ $dry = 1 ] && seconds=6 || seconds=25; }

echo "gpu-check: $("$bin/gpuwhy" --version), $("$python" --version 2>&1), $(uname -srm), $(date -u +%FT%TZ)"
echo "gpu-check: binaries from $bin, reports to $out"
if [ $dry = 1 ]; then
    echo "gpu-check: DRY RUN on the simulated GPU, PyTorch replaced by stand-ins"
    # `gpuwhy devices` on the simulator (healthy.json's H100); each job gets its own.
    nvml=$("$bin/gpuwhy" demo healthy --install-sim "$out/sim-devices") || die "cannot install the simulator"
    GPUWHY_NVML_PATH=$nvml "$bin/gpuwhy" devices || die "gpuwhy devices failed on the simulator"
else
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi --query-gpu=index,name,driver_version,memory.total,power.limit --format=csv,noheader || true
    fi
    "$python" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' ||
        die "$python cannot import torch or sees no CUDA device"
    "$bin/gpuwhy" devices || die "gpuwhy devices failed: no NVML or no GPU (GPUWHY_NVML_PATH names the library)"
fi

args=(--gpuwhy "$bin/gpuwhy" --lib "$bin/libgpuwhy.so" --pydir "$root/ffi/python"
    --out "$out" --seconds "$seconds" --jobs "$jobs")
[ $dry = 1 ] && args+=(--dry-run --slack 60 ${extra[@]+"${extra[@]}"})
status=0
"$python" "$root/scripts/gpu_check_jobs.py" "${args[@]}" || status=$?
# gpuwhy.torch: GPU-timed phases without a synchronising call (a stand-in of torch when dry).
torch_args=("$out/torch-timed.json")
[ $dry = 1 ] && torch_args=(--dry-run)
GPUWHY_LIB=$bin/libgpuwhy.so PYTHONPATH=$root/ffi/python \
    "$python" "$root/scripts/gpu_check_torch.py" "${torch_args[@]}" || { [ $status != 0 ] || status=1; }
exit $status
