"""``sdgym view``: a local web page over benchmark run folders (Flask, on 127.0.0.1).

Pages, each read fresh from the folders on every request (:mod:`.run_folders`; a run still in
progress shows what it has so far):

- ``/`` -- every planned cell with its status and test success, filtered by ``env``,
  ``method``, ``seed`` and ``status``; the validation curve of each training cell; the report
  figures of each folder.
- ``/grid?env=...`` -- methods x test tasks: each method's success on each task (mean over
  training and rollout seeds) against GRPO's on the same task, and the win/tie/loss count;
  ``outcome=differs`` keeps the tasks where some method differs from GRPO. Each square links to
  the task's page.
- ``/task?env=...&method=...&task=...`` -- the recorded test-panel episodes of one method on one
  task: every training seed's run, every rollout seed (``outcome=won|lost`` filters).
- ``/cell/<run>/<key>`` -- a cell's record and its recorded training and test-panel episodes
  (``outcome=won|lost`` filters).
- ``/episode/<run>/<key>/<n>`` -- one training episode turn by turn: the student's prompt, its
  response, the command the env received and its answer, the reward; for a teacher head the
  teacher's prompt beside the student's, with the privileged context marked.
- ``/episode/<run>/<key>/test/<n>`` -- one test-panel episode, the same way (the student's side
  only: privileged info is hidden on the test panel).

A missing or half-written folder gets a page that says what is missing, never a traceback.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.protocol.run_folders import (
    RunFolder,
    RunFolderError,
    cell_episodes,
    cell_test_episodes,
    grid_cells,
    read_run_folder,
    task_grid,
    validation_curve,
)

STYLE = """
body { font-family: sans-serif; margin: 1.5em; }
table { border-collapse: collapse; margin-bottom: 1em; }
td, th { border: 1px solid #ccc; padding: 2px 6px; font-size: 0.9em; vertical-align: top; }
.finished { background: #e6f4e6; } .failed { background: #f8d7da; }
.running { background: #fff3cd; } .stale { background: #eee; }
.win { background: #4caf50; } .loss { background: #e53935; } .tie { background: #ddd; }
td.sq { width: 9px; height: 9px; padding: 0; }
td.sq a { display: block; width: 9px; height: 9px; }
.test-panel { background: #e3f2fd; padding: 2px 6px; }
pre { white-space: pre-wrap; margin: 0; font-size: 0.85em; }
mark.privileged, mark.key { background: #ffe082; }
.turn { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; border-top: 2px solid #999;
        padding: 0.5em 0; }
.message { color: #555; font-size: 0.8em; }
"""

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>{{ title }} - sdgym view</title>
<style>{{ style }}</style></head>
<body><p><a href="/">runs</a>{% for env in envs %} | <a href="/grid?env={{ env }}">grid {{ env }}</a>{% endfor %}</p>
<h1>{{ title }}</h1>
{% for problem in problems %}<p class="problem" role="alert">{{ problem }}</p>{% endfor %}
{{ body }}
</body></html>"""

INDEX = """
<form method="get" id="filters">
{% for name, values in choices.items() %}
<label>{{ name }} <select name="{{ name }}"><option value="">all</option>
{% for value in values %}<option value="{{ value }}" {% if filters[name] == value|string %}selected{% endif %}>{{ value }}</option>{% endfor %}
</select></label>
{% endfor %}
<button type="submit">filter</button></form>
{% for index, run in runs %}
<h2 id="run-{{ index }}">{{ run.preset }} <small>{{ run.path }}</small></h2>
<p>{{ counts[index] }}</p>
<table class="cells"><tr><th>cell</th><th>status</th><th>env</th><th>method</th><th>seed</th>
<th>test success</th><th>validation curve</th></tr>
{% for cell in shown[index] %}
<tr class="{{ cell.status }}" data-cell="{{ cell.key }}">
<td><a href="/cell/{{ index }}/{{ cell.key }}">{{ cell.key }}</a></td><td>{{ cell.status }}</td>
<td>{{ cell.env }}</td><td>{{ cell.method }}</td><td>{{ cell.seed }}</td>
<td>{{ "%.3f"|format(cell.success) if cell.success is not none else "" }}</td>
<td>{{ curves[cell.key] }}</td></tr>
{% endfor %}</table>
{% for figure in run.figures() %}
<figure><img src="/figure/{{ index }}/{{ figure }}" alt="{{ figure }}" style="max-width: 48%"><figcaption>{{ figure }}</figcaption></figure>
{% endfor %}
{% endfor %}
"""

GRID = """
<p>Test success per task (mean over training seeds and rollout seeds) against GRPO on the same
task: <span class="win">&nbsp;win&nbsp;</span> <span class="tie">&nbsp;tie&nbsp;</span>
<span class="loss">&nbsp;loss&nbsp;</span>; a square opens the method's test episodes on that task. {{ grid.tasks|length }} tasks{% if differs %} (only those where a method differs from GRPO){% endif %}.
<a href="/grid?env={{ grid.env }}&outcome=differs">differing tasks only</a></p>
<table id="grid"><tr><th>method</th><th>win / tie / loss vs GRPO</th><th>tasks</th></tr>
{% for method in grid.methods %}
<tr data-method="{{ method }}"><td>{{ method }}</td>
<td class="tally">{% set t = grid.tally(method) %}{{ t.win }} / {{ t.tie }} / {{ t.loss }}</td>
<td><table><tr>{% for task in tasks %}{% set v = grid.versus_grpo(method, task) %}
<td class="sq {{ v }}" title="{{ task }}: {{ "%.2f"|format(grid.success[method][task]) if task in grid.success[method] else "not run" }}">{% if task in grid.success[method] %}<a href="/task?env={{ grid.env|urlencode }}&method={{ method|urlencode }}&task={{ task|urlencode }}"></a>{% endif %}</td>
{% endfor %}</tr></table></td></tr>
{% endfor %}</table>
"""

CELL = """
<p>status: <b>{{ cell.status }}</b>{% if cell.success is not none %}, test success {{ "%.3f"|format(cell.success) }} over {{ cell.record.outcomes|length }} episodes{% endif %}</p>
{% if not episodes %}<p>No recorded training episodes{% if cell.kind != "train" %} (only training cells record them){% endif %}.</p>{% endif %}
<form method="get"><label>outcome <select name="outcome"><option value="">all</option>
<option value="won" {% if outcome == "won" %}selected{% endif %}>won</option>
<option value="lost" {% if outcome == "lost" %}selected{% endif %}>lost</option></select></label>
<button type="submit">filter</button></form>
<h2>training episodes</h2>
<table id="episodes"><tr><th>#</th><th>step</th><th>task</th><th>won</th><th>score</th><th>turns</th><th>teacher context</th></tr>
{% for n, episode in episodes %}
<tr><td><a href="/episode/{{ run_index }}/{{ cell.key }}/{{ n }}">{{ n }}</a></td><td>{{ episode.step }}</td>
<td>{{ episode.task_id }}</td><td>{{ episode.won }}</td><td>{{ "%.2f"|format(episode.score) }}</td>
<td>{{ episode.turns|length }}</td><td>{{ episode.context_kind or "" }}</td></tr>
{% endfor %}</table>
<h2 class="test-panel">test panel episodes</h2>
{% if not test_count %}<p class="missing">{{ no_test_episodes }}{% if cell.kind not in ("train", "start") %} (only training and warm-start cells record them){% endif %}.</p>
{% else %}<p>{{ test_count }} recorded (every rollout seed of the panel's first tasks, up to
<code>infra.test_episodes_mb</code>); privileged info is hidden on the test panel.</p>
<table id="test-episodes"><tr><th>#</th><th>task</th><th>rollout seed</th><th>won</th><th>score</th><th>turns</th></tr>
{% for n, episode in test_episodes %}
<tr><td><a href="/episode/{{ run_index }}/{{ cell.key }}/test/{{ n }}">{{ n }}</a></td>
<td>{{ episode.task_id }}</td><td>{{ episode.rollout_seed }}</td><td>{{ episode.won }}</td>
<td>{{ "%.2f"|format(episode.score) }}</td><td>{{ episode.turns|length }}</td></tr>
{% endfor %}</table>{% endif %}
"""

TASK = """
<p>Test-panel episodes of <b>{{ method }}</b> on task <b>{{ task }}</b> ({{ env }}), every
training seed's run and every rollout seed; privileged info is hidden on the test panel, so
each shows the student's side only.</p>
<form method="get"><input type="hidden" name="env" value="{{ env }}">
<input type="hidden" name="method" value="{{ method }}"><input type="hidden" name="task" value="{{ task }}">
<label>outcome <select name="outcome"><option value="">all</option>
<option value="won" {% if outcome == "won" %}selected{% endif %}>won</option>
<option value="lost" {% if outcome == "lost" %}selected{% endif %}>lost</option></select></label>
<button type="submit">filter</button></form>
{% for entry in entries %}
<h2 class="test-panel">{{ entry.cell.key }} <small>{{ entry.run.path }}</small></h2>
{% if entry.message %}<p class="missing">{{ entry.message }}</p>{% else %}
<table class="test-episodes" data-cell="{{ entry.cell.key }}"><tr><th>#</th><th>rollout seed</th><th>won</th><th>score</th><th>turns</th></tr>
{% for n, episode in entry.episodes %}
<tr><td><a href="/episode/{{ entry.run_index }}/{{ entry.cell.key }}/test/{{ n }}">{{ n }}</a></td>
<td>{{ episode.rollout_seed }}</td><td>{{ episode.won }}</td><td>{{ "%.2f"|format(episode.score) }}</td>
<td>{{ episode.turns|length }}</td></tr>
{% endfor %}</table>{% endif %}
{% endfor %}
"""

EPISODE = """
{% if episode.panel == "test" %}<p class="test-panel">Test panel episode: split {{ episode.split }},
rollout seed {{ episode.rollout_seed }}, task index {{ episode.task_index }}, the model after
training step {{ episode.step }}. Privileged info is hidden on the test panel: the student's side
only.</p>{% endif %}
<p>step {{ episode.step }}, task {{ episode.task_id }} ({{ episode.task_type }}), won {{ episode.won }},
score {{ "%.2f"|format(episode.score) }}{% if episode.context_kind %}, teacher context
<b>{{ episode.context_kind }}</b>: the teacher's prompt is the student's with the
<mark class="key">marked</mark> context added{% endif %}.</p>
{% for turn in episode.turns %}
<div class="turn" id="turn-{{ turn.turn }}">
<div><h3>turn {{ turn.turn + 1 }}: student</h3>
{% for message in turn.prompt %}<div class="message">{{ message.role }}</div><pre>{{ message.content }}</pre>{% endfor %}
<h4>response</h4><pre class="response">{{ turn.response }}</pre>
<p>command: <code class="action">{{ turn.action }}</code>{% if not turn.action_valid %} (invalid{% if turn.parse_error %}: {{ turn.parse_error }}{% endif %}){% endif %}, reward {{ turn.reward }}</p>
<h4>observation</h4><pre class="observation">{{ turn.next_observation }}</pre></div>
<div>{% if turn.teacher_prompt %}<h3>teacher</h3>
{% for message in turn.teacher_prompt %}<div class="message">{{ message.role }}</div><pre class="teacher">{{ mark(message.content, turn.context) }}</pre>{% endfor %}
{% elif episode.context_kind %}<p>No teacher context at this turn.</p>{% endif %}</div>
</div>
{% endfor %}
"""


def _mark(content: str, context: str | None) -> Any:
    """``content`` HTML-escaped, with ``context`` (where it appears) in ``<mark>``."""
    from markupsafe import Markup, escape

    if not context or context not in content:
        return escape(content)
    before, _, after = content.partition(context)
    return Markup(f'{escape(before)}<mark class="privileged">{escape(context)}</mark>'
                  f'{escape(after)}')


NO_TEST_EPISODES = "this run recorded no test episodes"


def _outcome_filter(numbered: list[tuple[int, dict[str, Any]]],
                    outcome: str) -> list[tuple[int, dict[str, Any]]]:
    """The ``(number, episode)`` pairs kept by ``outcome`` (``won``, ``lost`` or all)."""
    return [(n, e) for n, e in numbered if not outcome or bool(e.get("won")) == (outcome == "won")]


def _curve(points: list[tuple[int, float]]) -> str:
    return " ".join(f"{step}:{value:.2f}" for step, value in points)


def create_app(folders: list[str | Path]) -> Any:
    """The Flask app over ``folders`` (each read on every request)."""
    from flask import Flask, abort, render_template_string, request, send_file

    app = Flask("sdgym.view")
    paths = [Path(folder) for folder in folders]

    def read_all() -> tuple[list[tuple[int, RunFolder]], list[str]]:
        runs, problems = [], []
        for index, path in enumerate(paths):
            try:
                runs.append((index, read_run_folder(path)))
            except RunFolderError as error:
                problems.append(str(error))
        return runs, problems

    def page(title: str, body: str, problems: list[str], shown_runs: list[tuple[int, RunFolder]],
             status: int = 200, **context: Any) -> tuple[str, int]:
        from markupsafe import Markup

        envs = list(dict.fromkeys(env for _, run in shown_runs for env in run.envs))
        inner = Markup(render_template_string(body, **context))  # escaped when rendered
        return render_template_string(PAGE, title=title, style=Markup(STYLE), envs=envs,
                                      problems=problems, body=inner), status

    def run_at(index: int) -> RunFolder:
        if not 0 <= index < len(paths):
            abort(404, description=f"no run folder #{index} ({len(paths)} given)")
        try:
            return read_run_folder(paths[index])
        except RunFolderError as error:
            abort(404, description=str(error))

    @app.errorhandler(404)
    def not_found(error: Any) -> tuple[str, int]:
        description = getattr(error, "description", "not found")
        return page("not found", "", [str(description)], [], status=404)

    @app.errorhandler(Exception)
    def failed(error: Exception) -> tuple[str, int]:  # a page, never a traceback
        code = getattr(error, "code", 500)
        return page("error", "", [f"{type(error).__name__}: {error}"], [],
                    status=code if isinstance(code, int) else 500)

    @app.get("/")
    def index() -> tuple[str, int]:
        runs, problems = read_all()
        filters = {name: request.args.get(name, "") for name in ("env", "method", "seed", "status")}
        cells = [cell for _, run in runs for cell in run.cells]
        choices = {"env": sorted({c.env for c in cells}), "method": sorted({c.method for c in cells}),
                   "seed": sorted({c.seed for c in cells}),
                   "status": sorted({c.status for c in cells})}
        shown, counts, curves = {}, {}, {}
        for index_, run in runs:
            kept = [c for c in run.cells
                    if all(not want or str(getattr(c, name)) == want
                           for name, want in filters.items())]
            shown[index_] = kept
            tally = Counter(cell.status for cell in run.cells)
            counts[index_] = ", ".join(f"{n} {status}" for status, n in sorted(tally.items()))
            for cell in kept:
                curves[cell.key] = _curve(validation_curve(cell))
        if not runs and not problems:
            problems.append("no run folders given")
        return page("runs", INDEX, problems, runs, runs=runs, shown=shown, counts=counts,
                    curves=curves, filters=filters, choices=choices)

    @app.get("/grid")
    def grid() -> tuple[str, int]:
        runs, problems = read_all()
        env = request.args.get("env", "")
        folders = [run for _, run in runs]
        if env not in {e for run in folders for e in run.envs}:
            abort(404, description=f"no run folder has env {env!r}")
        table = task_grid(folders, env)
        differs = request.args.get("outcome") == "differs"
        tasks = [t for t in table.tasks if not differs or any(
            table.versus_grpo(m, t) in ("win", "loss") for m in table.methods)]
        if "grpo" not in table.methods:
            problems.append(f"no finished GRPO cell for {env} yet: nothing to compare against")
        return page(f"{env}: methods x tasks", GRID, problems, runs, grid=table, tasks=tasks,
                    differs=differs)

    @app.get("/cell/<int:run_index>/<key>")
    def cell(run_index: int, key: str) -> tuple[str, int]:
        run = run_at(run_index)
        try:
            view = run.cell(key)
        except KeyError as error:
            abort(404, description=str(error.args[0]))
        outcome = request.args.get("outcome", "")
        episodes = _outcome_filter(list(enumerate(cell_episodes(view))), outcome)
        tests = list(enumerate(cell_test_episodes(view)))
        return page(key, CELL, [], [(run_index, run)], cell=view, episodes=episodes,
                    test_episodes=_outcome_filter(tests, outcome), test_count=len(tests),
                    no_test_episodes=NO_TEST_EPISODES, outcome=outcome, run_index=run_index)

    @app.get("/task")
    def task() -> tuple[str, int]:
        runs, problems = read_all()
        env, method, task_id = (request.args.get(name, "") for name in ("env", "method", "task"))
        outcome = request.args.get("outcome", "")
        entries = []
        for run_index, run in runs:
            for view in grid_cells(run, env):
                if view.method != method:
                    continue
                if not any(str(o.get("task_id")) == task_id
                           for o in (view.record or {}).get("outcomes") or []):
                    continue
                recorded = list(enumerate(cell_test_episodes(view)))
                mine = [(n, e) for n, e in recorded if str(e.get("task_id")) == task_id]
                message = ""
                if not recorded:
                    message = f"{NO_TEST_EPISODES} (made before they were recorded, or with " \
                              "infra.test_episodes_mb = 0)"
                elif not mine:
                    tasks = len({str(e.get("task_id")) for _, e in recorded})
                    message = (f"this run recorded the test episodes of its panel's first "
                               f"{tasks} tasks (up to infra.test_episodes_mb), not of this one")
                entries.append({"run_index": run_index, "run": run, "cell": view,
                                "episodes": _outcome_filter(mine, outcome), "message": message})
        if not entries:
            abort(404, description=f"no finished {method!r} cell of {env!r} was tested on "
                                   f"task {task_id!r}")
        return page(f"{method} on {task_id}", TASK, problems, runs, env=env, method=method,
                    task=task_id, entries=entries, outcome=outcome)

    def numbered_episode(run_index: int, key: str, number: int, test: bool) -> tuple[str, int]:
        run = run_at(run_index)
        try:
            view = run.cell(key)
        except KeyError as error:
            abort(404, description=str(error.args[0]))
        episodes = cell_test_episodes(view) if test else cell_episodes(view)
        what = "test-panel" if test else "training"
        if not episodes and test:
            abort(404, description=f"{key}: {NO_TEST_EPISODES}")
        if not 0 <= number < len(episodes):
            abort(404, description=f"{key} has {len(episodes)} recorded {what} episodes, "
                                   f"no #{number}")
        title = f"{key} {'test episode' if test else 'episode'} {number}"
        return page(title, EPISODE, [], [(run_index, run)], episode=episodes[number], mark=_mark)

    @app.get("/episode/<int:run_index>/<key>/<int:number>")
    def episode(run_index: int, key: str, number: int) -> tuple[str, int]:
        return numbered_episode(run_index, key, number, test=False)

    @app.get("/episode/<int:run_index>/<key>/test/<int:number>")
    def test_episode(run_index: int, key: str, number: int) -> tuple[str, int]:
        return numbered_episode(run_index, key, number, test=True)

    @app.get("/figure/<int:run_index>/<name>")
    def figure(run_index: int, name: str) -> Any:
        run = run_at(run_index)
        if name not in run.figures():
            abort(404, description=f"{run.path} has no figure {name!r}")
        return send_file(run.path / name)

    return app
