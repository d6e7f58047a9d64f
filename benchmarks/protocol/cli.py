"""``sdgym benchmark``: run (or dry-run) a benchmark preset and write its report folder."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``sdgym benchmark``."""
    parser.add_argument("--preset", default="cpu-mini-bench",
                        help="benchmark preset name (the -bench suffix may be left out) or TOML file, "
                             "or a suite of presets run one after another with one merged "
                             "report (e.g. cpu-four-settings)")
    parser.add_argument("--out", default=None, help="report folder (default reports/<preset>)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the run matrix and a projected cost; run nothing")
    parser.add_argument("--jobs", type=int, default=None,
                        help="cells run at once in reused worker processes on this machine "
                             "(default: one per usable CPU core; 1 runs them one after another "
                             "in this process)")
    parser.add_argument("--ray", action="store_true",
                        help="run the cells as Ray tasks (a local Ray instance unless --ray-address)")
    parser.add_argument("--ray-address", default=None,
                        help="Ray cluster to dispatch cells to (implies --ray), e.g. 'auto'")
    parser.add_argument("--ray-cpus-per-cell", type=float, default=1.0,
                        help="CPUs each cell task holds (default 1)")
    parser.add_argument("--cost-measure", choices=("flops", "cpu", "wall"), default=None,
                        help="the report's training-cost measure (default: flops on CPU, wall "
                             "on GPU)")
    parser.add_argument("--ray-gpus-per-cell", type=float, default=0.0,
                        help="GPUs each cell task holds (default 0)")


def run(args: argparse.Namespace) -> int:
    """Run the matrix (or each part of a suite), then write ``report.md``, plots and
    ``results.jsonl``; exit 1 when a cell failed or is missing."""
    from rich.console import Console

    from benchmarks.protocol.matrix import load_benchmark_preset
    from benchmarks.protocol.process_dispatch import usable_cores
    from benchmarks.protocol.suite import load_suite
    from sdgym.cli import check_at_least, check_writable

    suite = load_suite(args.preset)
    presets = suite.presets if suite else [load_benchmark_preset(args.preset)]
    out = Path(args.out or f"reports/{suite.name if suite else presets[0].name}")
    check_writable(out)
    jobs = usable_cores() if args.jobs is None else args.jobs
    check_at_least("--jobs", jobs)
    console = Console()
    if suite is None:
        return run_preset(presets[0], out, args, jobs, console, show_report=True)
    from benchmarks.protocol.suite import part_folders

    folders = part_folders(suite, out)
    failed = 0
    for index, (preset, folder) in enumerate(zip(presets, folders, strict=True), start=1):
        console.print(f"suite {suite.name}: part {index} of {len(presets)}: {preset.name} "
                      f"-> {folder}")
        failed |= run_preset(preset, folder, args, jobs, console, show_report=False)
    if args.dry_run:
        return 0
    from benchmarks.protocol.report_cli import write_merged_report

    title = suite.title or f"sdgym benchmark — {suite.name}"
    return write_merged_report(folders, out, title, args.cost_measure, console,
                               show_report=True) or failed


def run_preset(preset, out: Path, args: argparse.Namespace, jobs: int, console,
               show_report: bool) -> int:
    """Run (or dry-run) one benchmark preset into ``out``; exit code 1 when a cell failed."""
    from rich.table import Table

    from benchmarks.protocol.matrix import plan, run_matrix
    from benchmarks.protocol.report import write_report

    cells, notes = plan(preset)
    if args.dry_run:  # creates nothing (a later real run may then move folders into place)
        from benchmarks.protocol.projection import project

        projection = project(cells, out, preset)
        table = Table(title=f"benchmark {preset.name}: {len(cells)} cells")
        for column in ("cell", "kind", "env", "method", "seed", "projected s", "basis"):
            table.add_column(column)
        for cell in cells:
            seconds, basis = projection[cell.key]
            table.add_row(cell.key, cell.kind, cell.env_id, cell.method, str(cell.seed),
                          f"{seconds:.0f}", basis)
        console.print(table)
        for note in notes:
            console.print(f"[yellow]{note}[/]")
        total = sum(seconds for seconds, _ in projection.values())
        bases = sorted({basis for _, basis in projection.values()})
        console.print(f"projected total: {total / 60:.1f} min (basis: {', '.join(bases)})")
        print_memory_plans(cells, preset, out)
        return 0
    out.mkdir(parents=True, exist_ok=True)
    dispatch = None
    if args.ray or args.ray_address:
        from benchmarks.protocol.ray_dispatch import RayDispatch

        dispatch = RayDispatch(args.ray_address, args.ray_cpus_per_cell, args.ray_gpus_per_cell)
    from benchmarks.protocol.progress import CellProgress

    progress = CellProgress(len(cells), lambda line: console.print(  # one line, never wrapped
        line, markup=False, highlight=False, soft_wrap=True))
    result = run_matrix(preset, out, on_cell=progress, dispatch=dispatch, jobs=jobs)
    report = write_report(result, out, f"sdgym benchmark — {preset.name}", args.cost_measure)
    if show_report:
        console.print(report.read_text(), markup=False, highlight=False)  # Markdown as written
    console.print(f"report: {report}")
    return 1 if result["failures"] else 0


def print_memory_plans(cells: list, preset, out: Path) -> None:
    """The per-GPU memory plan of each env's training config (one GPU per cell)."""
    from baselines.memory_plan import fit_advice, plan_memory
    from benchmarks.protocol.matrix import cell_config

    shown: set[str] = set()
    for cell in cells:
        if cell.kind != "train" or cell.env_id in shown:
            continue
        shown.add(cell.env_id)
        config = cell_config(cell, preset, out)
        print(f"{cell.env_id} ({cell.method}):")
        print(plan_memory(config, 1).table())
        advice = fit_advice(config, 1)
        if advice:
            print(advice)
