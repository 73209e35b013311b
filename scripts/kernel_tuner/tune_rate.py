#!/usr/bin/env python3
"""Tune a space exported by gemmlab with kernel_tuner, and time the whole tuning call.

usage: tune_rate.py SPACE.json OUT.json [--quiet] [--device N] [--cupy-disk-cache]
       tune_rate.py --dry-run SPACE.json           (no GPU needed; see dry_run())

SPACE.json (written by gemmlab):
  kernel, entry, toolchain ("cuda"), source (full CUDA C++ source, prelude included,
  parameters as preprocessor defines), size [M, N, K], b_transposed, iterations, seed,
  points: [{"defines": {NAME: int}, "block": [x, y(, z)], "grid": [x, y(, z)]}, ...],
  optionally compiler_options: [NVRTC flags] (default ["--std=c++17"], see below).

What runs: kernel_tuner's tune_kernel with lang="cupy" (CuPy's RawModule, i.e. NVRTC),
strategy brute_force, over exactly the listed points, `iterations` timed launches each,
every config checked against an f64 reference before it is timed. OUT.json gets the
kernel_tuner version, the wall seconds of the whole tune_kernel call (search space
construction, CuPy device setup, compiles, checks and timed launches included), configs
per second over that call, every config's result, the best config, and the options used.

This script installs nothing. On the GPU machine the batch installs the wheels from
fetch-wheels.sh with install-wheels.sh and puts that folder on PYTHONPATH.
"""

import argparse
import json
import math
import os
import platform
import sys
import time
import traceback
import types

# gemmlab's full-reference check (src/gemm/check.rs), applied here to every config:
#  - every element within MAX_ELEMENT_ERR_RMS * rms(Cref) of the f64 reference;
#  - relative Frobenius error ||C - Cref||_F / ||Cref||_F <= MAX_REL_FROBENIUS;
#  - no NaN or infinity (C is filled with NaN before the checked launch, so an element
#    the kernel never writes fails).
# Why these bounds fit an FP32 GEMM with inputs uniform in [-1, 1): each C element is a
# length-K dot product; its f32 rounding error grows like sqrt(K) * 2^-24 relative to
# the terms (about 4e-6 at K = 4096, still ~1e-5 at K = 65536), while rms(Cref) is about
# sqrt(K / 9). An element bound of 1e-3 * rms is therefore some 100x above honest rounding
# at any K gemmlab runs, yet an indexing or synchronisation bug (errors of order rms)
# fails it at once, even in a single element. A bound scaled by rms rather than by
# max|C| is what gemmlab uses: max|C| grows with the matrix size (extreme values), rms
# does not. This absolute bound is what is passed to tune_kernel as `atol`.
MAX_REL_FROBENIUS = 1e-4
MAX_ELEMENT_ERR_RMS = 1e-3

# The launch-geometry tunable parameters: kernel_tuner's default block-size names, so its
# own rules apply unchanged (grid derivation, the max-threads-per-block restriction).
# They are NOT defined in the kernel source (see `defines` in build_problem).
BLOCK_NAMES = ["block_size_x", "block_size_y", "block_size_z"]


def fail(msg):
    sys.exit(f"tune_rate: {msg}")


def load_space(path):
    with open(path) as f:
        space = json.load(f)
    for key in ("entry", "source", "size", "b_transposed", "iterations", "points"):
        if key not in space:
            fail(f"{path}: no '{key}'")
    if space.get("toolchain", "cuda") != "cuda":
        fail(f"{path}: toolchain {space.get('toolchain')!r}; kernel_tuner's cupy backend runs CUDA only")
    if len(space["size"]) != 3 or not all(isinstance(v, int) and v > 0 for v in space["size"]):
        fail(f"{path}: size must be [M, N, K] positive integers")
    if not isinstance(space["iterations"], int) or space["iterations"] < 1:
        fail(f"{path}: iterations must be a positive integer")
    if not space["points"]:
        fail(f"{path}: no points")
    names = list(space["points"][0]["defines"])
    for i, p in enumerate(space["points"]):
        d = p.get("defines", {})
        if sorted(d) != sorted(names):
            fail(f"{path}: point {i} defines {sorted(d)}, point 0 defines {sorted(names)}")
        for k, v in d.items():
            # bool is an int in Python but would be written '#define X True'
            if not isinstance(v, int) or isinstance(v, bool):
                fail(f"{path}: point {i}: {k}={v!r} is not an integer")
        for key in ("block", "grid"):
            dims = p.get(key)
            if not (isinstance(dims, list) and 1 <= len(dims) <= 3
                    and all(isinstance(v, int) and v >= 1 for v in dims)):
                fail(f"{path}: point {i}: {key} must be 1 to 3 positive integers, got {dims!r}")
    clash = [n for n in names if n in BLOCK_NAMES or n in ("grid_size_x", "grid_size_y", "grid_size_z", "time")]
    if clash:
        fail(f"{path}: define names {clash} clash with names kernel_tuner reserves")
    return space


def pad3(dims):
    return tuple(list(dims) + [1] * (3 - len(dims)))


def build_problem(space):
    """Everything tune_kernel needs to visit exactly the listed points, and nothing else.

    - tune_params: one tunable parameter per define, with the values seen across the
      points, plus block_size_x/y(/z) with the block dimensions seen.
    - restrictions: the search space is the Cartesian product of those values cut down to
      the listed points. The cut is given as string restrictions, "(P0, P1) in {...}",
      "(P0, P1, P2) in {...}", ... up to the full tuple: the last one alone is exact, the
      shorter prefixes let python-constraint (kernel_tuner's solver) prune partial
      assignments instead of enumerating the whole product. (A single Python function
      restriction is equally exact, but kernel_tuner gives a callable every parameter, so
      the solver can only test it on complete assignments: 10.7 s against 0.9 s for a
      6,544-point gemm6 space whose product has 3.2 million members, on a dev machine.)
    - problem_size: a function of the config returning that point's grid, with
      grid_div_x/y/z = [] (no divisor), so kernel_tuner launches exactly the listed grid
      (util.get_problem_size accepts a callable; util.get_grid_dimensions divides by the
      product of an empty divisor list, 1).
    - defines: exactly the point's defines, '#define NAME VALUE' each (kernel_tuner's
      default would also define block_size_x/y/z, grid_size_x/y/z and kernel_tuner).
    """
    points = space["points"]
    define_names = list(points[0]["defines"])
    nblock = max(len(p["block"]) for p in points)
    block_names = BLOCK_NAMES[:max(nblock, 2)]
    names = define_names + block_names

    def key_of(p):
        return tuple(p["defines"][n] for n in define_names) + pad3(p["block"])[:len(block_names)]

    grid_of = {}
    for i, p in enumerate(points):
        k = key_of(p)
        g = pad3(p["grid"])
        if k in grid_of and grid_of[k] != g:
            fail(f"point {i} repeats an earlier point's defines and block with another grid")
        grid_of[k] = g
    keys = list(grid_of)  # unique, in file order

    tune_params = {n: sorted({k[i] for k in keys}) for i, n in enumerate(names)}

    restrictions = []
    for j in range(1, len(names)):
        proj = sorted({k[:j + 1] for k in keys})
        restrictions.append(f"({', '.join(names[:j + 1])}) in {{{', '.join(repr(t) for t in proj)}}}")

    state = types.SimpleNamespace(current=None, checks={})

    def config_key(params):
        return tuple(params[n] for n in names)

    def problem_size(params):
        # Called by kernel_tuner for every config before it is compiled: also remembers
        # which config is in flight (the verify function and an abort report use it).
        k = config_key(params)
        state.current = k
        return grid_of[k]

    defines = {n: (lambda p, n=n: p[n]) for n in define_names}

    return types.SimpleNamespace(
        define_names=define_names, block_names=block_names, names=names, keys=keys,
        grid_of=grid_of, tune_params=tune_params, restrictions=restrictions,
        problem_size=problem_size, grid_div=([], [], []), defines=defines,
        config_key=config_key, state=state,
    )


def point_of(prob, key):
    d = dict(zip(prob.define_names, key[:len(prob.define_names)]))
    block = list(key[len(prob.define_names):])
    return {"defines": d, "block": block, "grid": list(prob.grid_of[key][:max(2, len(block))])}


def dry_run(space_path):
    """Builds what tune_kernel would get and checks it with kernel_tuner's own code, no GPU:
    the Searchspace class tune_kernel constructs (same arguments, max_threads 1024 as on an
    H200), util.setup_block_and_grid and util.prepare_kernel_string as
    DeviceInterface.create_kernel_instance calls them for every config, and the argument
    list check tune_kernel runs on the source."""
    import warnings
    import numpy as np
    import kernel_tuner
    from kernel_tuner import util
    from kernel_tuner.core import KernelSource
    from kernel_tuner.searchspace import Searchspace

    space = load_space(space_path)
    prob = build_problem(space)
    print(f"kernel_tuner {kernel_tuner.__version__}, python {platform.python_version()}, numpy {np.__version__}")
    print(f"space {space_path}: kernel {space.get('kernel')} entry {space['entry']}, size {space['size']}, "
          f"b_transposed {space['b_transposed']}, iterations {space['iterations']}")
    print(f"points listed {len(space['points'])}, unique {len(prob.keys)}")
    print("tunable parameters: " + ", ".join(f"{n} {v}" for n, v in prob.tune_params.items()))
    product = math.prod(len(v) for v in prob.tune_params.values())
    print(f"Cartesian product of their values: {product}; restrictions: {len(prob.restrictions)} strings, "
          f"{sum(len(r) for r in prob.restrictions)} characters")

    util.check_tune_params_list(prob.tune_params, None)
    bsn = util.check_block_size_params_names_list(None, prob.tune_params)
    bsn = list(bsn) if bsn else list(util.default_block_size_names)
    util.append_default_block_size_names(bsn)
    t0 = time.perf_counter()
    ss = Searchspace(prob.tune_params, prob.restrictions, 1024)
    build_s = time.perf_counter() - t0
    configs = ss.sorted_list()  # what brute_force hands the runner, in that order
    print(f"kernel_tuner's Searchspace: {ss.size} configs, built in {build_s:.3f} s")
    problems = []
    if sorted(configs) != sorted(prob.keys):
        extra = set(configs) - set(prob.keys)
        missing = set(prob.keys) - set(configs)
        problems.append(f"search space differs from the listed points: {len(extra)} extra, {len(missing)} missing")

    source = KernelSource(space["entry"], space["source"], "cupy", prob.defines)
    M, N, K = space["size"]
    dummy = [np.int32(M), np.int32(N), np.int32(K)] + [np.zeros(4, np.float32) for _ in range(3)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        source.check_argument_lists(space["entry"], dummy)
    for w in caught:
        problems.append(f"argument list check: {w.message}")

    # What the file lists, read again straight from it (not through build_problem's tables).
    listed = {}
    for p in space["points"]:
        k = tuple(p["defines"][n] for n in prob.define_names) + pad3(p["block"])[:len(prob.block_names)]
        listed[k] = p
    checked = 0
    for cfg in configs:
        params = dict(zip(prob.tune_params, cfg))
        threads, grid = util.setup_block_and_grid(prob.problem_size, prob.grid_div, params, bsn)
        if cfg not in listed:
            continue
        want = listed[cfg]
        if tuple(threads) != pad3(want["block"]):
            problems.append(f"{want['defines']}: block {threads}, listed {want['block']}")
        if tuple(grid) != pad3(want["grid"]):
            problems.append(f"{want['defines']}: grid {grid}, listed {want['grid']}")
        name, text = util.prepare_kernel_string(space["entry"], space["source"], params, grid, threads,
                                                bsn, "CUPY", prob.defines)
        head = text[:len(text) - len(space["source"])]
        got = [line for line in head.splitlines() if line.startswith("#define ")]
        expect = [f"#define {k} {v}" for k, v in want["defines"].items()]
        if name != space["entry"] or got != expect or not text.endswith(space["source"]):
            problems.append(f"{want['defines']}: kernel string prefix {got}, expected {expect}")
        checked += 1
    if configs:
        first = point_of(prob, configs[0])
        print(f"first config (also kernel_tuner's warm-up): {first}")
        params = dict(zip(prob.tune_params, configs[0]))
        threads, grid = util.setup_block_and_grid(prob.problem_size, prob.grid_div, params, bsn)
        _, text = util.prepare_kernel_string(space["entry"], space["source"], params, grid, threads,
                                             bsn, "CUPY", prob.defines)
        print("its source starts:\n    " + "\n    ".join(text.splitlines()[:len(first["defines"]) + 1]))
    print(f"checked {checked} configs: block, grid and defines as listed")
    if problems:
        for p in problems[:20]:
            print("PROBLEM: " + p)
        print(f"dry run FAILED: {len(problems)} problems")
        return 1
    print(f"dry run OK: kernel_tuner would evaluate {len(configs)} configs, each with its listed block and grid")
    return 0


def install_cupy14_uuid_shim():
    """CuPy 14 vs kernel_tuner 1.5's cupy backend.

    CupyFunctions.__init__ records the device UUID as
        str(uuid.UUID(bytes=cp.cuda.runtime.getDeviceProperties(device)["uuid"]))
    shared/GPU.md reports that with CuPy 14 that value is not always 16 bytes long, and
    uuid.UUID then raises "bytes is not a 16-char string" before any tuning starts (on
    the H200 these scripts were tried on, CuPy 14.2 gave 16 bytes and the shim changed
    nothing; a device whose UUID holds a zero byte may be what differs). The UUID only goes into
    kernel_tuner's environment record; nothing is decided by it. So the backend's
    module-level `uuid` name is pointed at a stand-in whose UUID() brings such a value to
    16 bytes (truncated or zero-padded) and otherwise behaves as uuid.UUID. It is done on
    the backend module only, after importing it and before tune_kernel creates the
    backend, so no other code in the process sees a changed uuid module.
    """
    import uuid as _uuid
    import kernel_tuner.backends.cupy as kt_cupy

    def tolerant_uuid(*args, **kwargs):
        raw = kwargs.get("bytes")
        if raw is not None:
            if isinstance(raw, str):
                raw = raw.encode("latin-1", "replace")
            try:
                raw = bytes(raw)
            except (TypeError, ValueError):
                raw = bytes(int(x) & 0xFF for x in raw)
            kwargs["bytes"] = raw[:16].ljust(16, b"\0")
        return _uuid.UUID(*args, **kwargs)

    kt_cupy.uuid = types.SimpleNamespace(UUID=tolerant_uuid)


def jsonable(v):
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, (str, int, bool)) or v is None:
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    try:
        import numpy as np
        if isinstance(v, np.integer):
            return int(v)
        if isinstance(v, np.floating):
            f = float(v)
            return f if math.isfinite(f) else None
        if isinstance(v, np.ndarray):
            return jsonable(v.tolist())
    except ImportError:
        pass
    return str(v)


def run(space_path, out_path, args):
    t_start = time.perf_counter()
    # CuPy keeps every compiled kernel in a disk cache (~/.cupy/kernel_cache) and serves it
    # on the next run: a rerun would then time cache hits, not compiles. In-memory only
    # (unless --cupy-disk-cache): each run compiles every config. Set before cupy loads.
    if not args.cupy_disk_cache:
        os.environ["CUPY_CACHE_IN_MEMORY"] = "1"
    import numpy as np
    import cupy as cp
    import kernel_tuner
    from kernel_tuner import tune_kernel
    install_cupy14_uuid_shim()

    space = load_space(space_path)
    prob = build_problem(space)
    M, N, K = space["size"]
    iterations = space["iterations"]
    compiler_options = list(space.get("compiler_options", ["--std=c++17"]))
    flop = 2.0 * M * N * K

    # Operands as the kernels read them: column-major A (M x K), B (K x N) or, with
    # b_transposed, B^T (N x K) in the B buffer; uniform in [-1, 1), seeded.
    rng = np.random.default_rng(space.get("seed", 42))
    a = (rng.random(M * K, dtype=np.float32) * 2 - 1).astype(np.float32)
    b = (rng.random(K * N, dtype=np.float32) * 2 - 1).astype(np.float32)
    c = np.full(M * N, np.nan, dtype=np.float32)  # poison: unwritten elements fail the check

    # f64 reference on the GPU, once. Column-major X (P x Q) is the C-order (Q, P) array
    # X^T, so C^T = B^T A^T; raveled in C order it is C's column-major buffer.
    at = cp.asarray(a, dtype=cp.float64).reshape(K, M)             # A^T
    if space["b_transposed"]:
        bt = cp.asarray(b, dtype=cp.float64).reshape(K, N).T       # buffer is B^T col-major = B row-major
    else:
        bt = cp.asarray(b, dtype=cp.float64).reshape(N, K)         # B col-major = B^T row-major
    ref = (bt @ at).ravel()
    del at, bt
    ref2 = float(cp.sum(ref * ref))
    rms = math.sqrt(ref2 / ref.size)
    atol = MAX_ELEMENT_ERR_RMS * rms
    answer = [None, None, None, None, None, cp.asnumpy(ref).astype(np.float32)]
    cp.cuda.Device().synchronize()

    def verify(expected, result_host, atol=atol):
        # kernel_tuner calls this after one launch of the freshly compiled config, with C
        # refilled from the host (NaN) first and copied back after. The comparison runs on
        # the GPU against the f64 reference (`expected` is its f32 rounding; it is what
        # makes kernel_tuner check and copy back C). Always True: a False here makes
        # kernel_tuner raise and end the whole tuning run, whereas gemmlab counts a
        # failed check and goes on; so the verdict is recorded and reported instead, and
        # a failed config can never be the best one.
        got = cp.asarray(result_host[5]).astype(cp.float64)
        finite = cp.isfinite(got)
        non_finite = int(got.size - int(cp.count_nonzero(finite)))
        d = cp.where(finite, got - ref, 0.0)
        diff2 = float(cp.sum(d * d))
        worst = float(cp.max(cp.abs(d)))
        rel = math.sqrt(diff2 / ref2) if ref2 > 0 else math.sqrt(diff2)
        prob.state.checks[prob.state.current] = {
            "passed": non_finite == 0 and rel <= MAX_REL_FROBENIUS and worst <= atol,
            "rel_frobenius": rel, "max_err_over_rms": worst / rms if rms > 0 else worst,
            "non_finite": non_finite,
        }
        return True

    arguments = [np.int32(M), np.int32(N), np.int32(K), a, b, c]
    setup_s = time.perf_counter() - t_start

    status, error, results, env = "ok", None, [], {}
    t0 = time.perf_counter()
    try:
        results, env = tune_kernel(
            space["entry"], space["source"], prob.problem_size, arguments, prob.tune_params,
            grid_div_x=[], grid_div_y=[], grid_div_z=[],
            restrictions=prob.restrictions, defines=prob.defines,
            answer=answer, atol=atol, verify=verify,
            lang="cupy", device=args.device, iterations=iterations,
            compiler_options=compiler_options, strategy="brute_force",
            verbose=True, quiet=args.quiet,
        )
    except Exception as e:  # kernel_tuner ends the whole run on an unexpected compile or launch error
        status = "aborted"
        error = {"message": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()[-4000:],
                 "config": point_of(prob, prob.state.current) if prob.state.current in prob.grid_of else None}
        traceback.print_exc()
    wall_s = time.perf_counter() - t0

    configs = []
    counts = {"compile_failed": 0, "runtime_failed": 0, "invalid": 0, "other_error": 0,
              "verification_failed": 0, "not_checked": 0, "timed": 0}
    for r in results:
        key = prob.config_key(r)
        entry = point_of(prob, key)
        err = r.get("__error__")
        times = [float(t) for t in r.get("times", [])]
        check = prob.state.checks.get(key)
        entry.update({
            "error": str(err) if err is not None else None,
            "time_ms_median": float(np.median(times)) if times else None,
            "time_ms_mean": float(r["time"]) if "time" in r and err is None else None,
            "times_ms": times,
            "compile_ms": r.get("compile_time"), "verification_ms": r.get("verification_time"),
            "benchmark_ms": r.get("benchmark_time"), "framework_ms": r.get("framework_time"),
            "check": check,
        })
        med = entry["time_ms_median"]
        entry["gflops"] = flop / (med * 1e-3) / 1e9 if med else None
        mean = entry["time_ms_mean"]
        entry["gflops_mean"] = flop / (mean * 1e-3) / 1e9 if mean else None
        if err is not None:
            kind = type(err).__name__
            counts[{"CompilationFailedConfig": "compile_failed", "RuntimeFailedConfig": "runtime_failed",
                    "InvalidConfig": "invalid"}.get(kind, "other_error")] += 1
        else:
            counts["timed"] += bool(times)
            if check is None:
                counts["not_checked"] += 1
            elif not check["passed"]:
                counts["verification_failed"] += 1
        configs.append(entry)

    ok = [c for c in configs if c["error"] is None and c["gflops"] and c["check"] and c["check"]["passed"]]
    best = max(ok, key=lambda c: c["gflops"]) if ok else None
    kt_best = env.get("best_config") if isinstance(env, dict) else None
    kt_best_point = None
    if isinstance(kt_best, dict) and all(n in kt_best for n in prob.names):
        kt_best_point = point_of(prob, prob.config_key(kt_best))
        kt_best_point["time_ms_mean"] = jsonable(kt_best.get("time"))

    out = {
        "tool": "kernel_tuner",
        "kernel_tuner_version": kernel_tuner.__version__,
        "status": status,
        "error": error,
        "space": {
            "file": os.path.abspath(space_path), "kernel": space.get("kernel"), "entry": space["entry"],
            "size": space["size"], "b_transposed": space["b_transposed"], "seed": space.get("seed", 42),
            "points_listed": len(space["points"]), "points_unique": len(prob.keys),
        },
        "options": {
            "strategy": "brute_force", "lang": "cupy", "iterations": iterations,
            "time_per_config": "kernel_tuner times `iterations` launches, one CUDA event pair and a "
                               "synchronize each; time_ms_median is the median of them, time_ms_mean "
                               "kernel_tuner's own 'time' (their mean)",
            "warm_up": "kernel_tuner compiles, checks and times the first config once more before "
                       "the run, and discards that",
            "verification": {
                "reference": "f64 GEMM on the GPU with CuPy (cuBLAS DGEMM), once",
                "atol": atol, "rms_ref": rms,
                "max_element_err_over_rms": MAX_ELEMENT_ERR_RMS,
                "max_rel_frobenius": MAX_REL_FROBENIUS,
                "nan_poisoned_output": True,
                "on_failure": "recorded and counted; the config is still timed, never the best",
            },
            "compiler_options": compiler_options,
            "cupy_kernel_cache": "disk" if args.cupy_disk_cache else "in memory (CUPY_CACHE_IN_MEMORY=1)",
            "device": args.device,
        },
        "environment": {
            "python": platform.python_version(), "numpy": np.__version__, "cupy": cp.__version__,
            "device_name": jsonable(env.get("device_name")) if isinstance(env, dict) else None,
            "compute_capability": jsonable(env.get("compute_capability")) if isinstance(env, dict) else None,
            "cuda_driver_version": jsonable(env.get("cuda_version")) if isinstance(env, dict) else None,
            "device_uuid": jsonable(env.get("uuid")) if isinstance(env, dict) else None,  # via the uuid shim
            "nvrtc_version": jsonable(_nvrtc_version(cp)),
        },
        "wall_s": wall_s,
        "setup_s": setup_s,
        "configs_tried": len(results),
        "configs_per_s": len(results) / wall_s if wall_s > 0 and results else None,
        "counts": counts,
        "kernel_tuner_totals_ms": {k: jsonable(env.get(k)) for k in (
            "total_compile_time", "total_verification_time", "total_benchmark_time",
            "total_framework_time", "total_strategy_time", "overhead_time")} if isinstance(env, dict) else {},
        "best": best,
        "kernel_tuner_best": kt_best_point,
        "configs": configs,
    }
    with open(out_path, "w") as f:
        json.dump(jsonable(out), f, indent=1)
        f.write("\n")
    rate = f"{out['configs_per_s']:.3f}" if out["configs_per_s"] else "-"
    print(f"tune_rate: {status}, {len(results)} configs in {wall_s:.2f} s ({rate} configs/s); "
          f"compile failed {counts['compile_failed']}, launch failed {counts['runtime_failed']}, "
          f"check failed {counts['verification_failed']}; best "
          + (f"{best['gflops']:.0f} GFLOP/s {best['defines']}" if best else "none") + f" -> {out_path}",
          flush=True)
    return 0 if status == "ok" else 1


def _nvrtc_version(cp):
    try:
        return cp.cuda.nvrtc.getVersion()
    except Exception:
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("space", help="space JSON exported by gemmlab")
    ap.add_argument("out", nargs="?", help="result JSON to write (not needed with --dry-run)")
    ap.add_argument("--dry-run", action="store_true",
                    help="no GPU: build kernel_tuner's search space and check the block, grid and defines of every point")
    ap.add_argument("--device", type=int, default=0, help="CUDA device number (default 0)")
    ap.add_argument("--quiet", action="store_true", help="pass quiet=True to tune_kernel (no line per config)")
    ap.add_argument("--cupy-disk-cache", action="store_true",
                    help="let CuPy use its disk kernel cache (a rerun then times cache hits, not compiles)")
    args = ap.parse_args()
    if args.dry_run:
        return dry_run(args.space)
    if not args.out:
        ap.error("OUT.json is required unless --dry-run")
    return run(args.space, args.out, args)


if __name__ == "__main__":
    sys.exit(main())
