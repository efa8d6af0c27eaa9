"""``watch --report FILE.md``: every watched session in plain English.

Per session: the agent and version, where it worked, what the user asked (when exported),
each step, and what the rules found: violations with their severity and step, checks that
could not be judged with the setting that would let them, and where the session was saved.
"""

from __future__ import annotations

from otel_oracles.watch._describe import describe_alert, describe_step
from otel_oracles.watch._watcher import CONTRACT_FILE, Watcher


def markdown_report(watcher: Watcher) -> str:
    sessions = watcher.sessions()
    violations = watcher.violations()
    lines = [
        "# otel-oracles watch report",
        "",
        f"{len(sessions)} session(s) watched, {len(violations)} rule violation(s). "
        f"Rules: `{watcher.contract_path}`.",
        "",
    ]
    for s in sessions:
        version = f" {s.version}" if s.version else ""
        lines += [f"## {s.agent}{version}, session `{s.session_id}`", ""]
        lines.append(f"- **Working directory:** {s.cwd or 'not exported'}")
        prompts = [e for e in s.events if e.get("kind") == "prompt"]
        for p in prompts:
            lines.append(f"- **Asked:** {p.get('text') or '(not exported: ' + p['missing'] + ')'}")
        models = [e for e in s.events if e.get("kind") == "model"]
        if models:
            names = sorted({str(m.get("model")) for m in models if m.get("model")})
            lines.append(
                f"- **Model calls:** {len(models)} ({', '.join(names) or 'model unknown'})"
            )
        denied = [
            e for e in s.events if e.get("kind") == "decision" and e.get("decision") == "reject"
        ]
        if denied:
            lines.append(f"- **Permission denied:** {', '.join(str(d['tool']) for d in denied)}")
        lines += ["", "Steps:", ""]
        for i, step in enumerate(s.steps):
            status = " (failed)" if step.get("status") == "error" else ""
            lines.append(f"{i}. {describe_step(step)}{status}")
        if not s.steps:
            lines.append("(none)")
        alerts = watcher.alerts.get(s.key, [])
        found = [a for a in alerts if a.is_violation]
        unjudged = [a for a in alerts if not a.is_violation]
        lines += ["", "Findings:", ""]
        lines += [f"- {describe_alert(a)}" for a in found] or ["- no rule violated"]
        lines += [f"- {describe_alert(a)}" for a in unjudged]
        trajectory = watcher.save_dir / f"{s.key}.trajectory.json"
        lines += [
            "",
            f"Saved as `{trajectory}` (replay: `otel-oracles run "
            f"{watcher.save_dir / CONTRACT_FILE} --trajectory {trajectory}`), raw telemetry in "
            f"`{watcher.save_dir / (s.key + '.telemetry.jsonl')}`.",
            "",
        ]
    return "\n".join(lines).rstrip("\n") + "\n"
