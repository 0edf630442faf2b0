// Tideline panel: the little script the pages need (shipped in the package, no libraries).
"use strict";

// A run's page: poll /api/runs/<id> until the run is over.
function followRun(box) {
  const id = box.dataset.run;
  const set = (sel, text) => { document.getElementById(sel).textContent = text; };
  const tick = () => {
    fetch(`/api/runs/${id}`, { credentials: "same-origin", headers: { accept: "application/json" } })
      .then((r) => r.json())
      .then((run) => {
        document.getElementById("run-progress").value = run.done;
        set("run-status", run.status);
        set("run-step", run.step || "—");
        set("run-done", run.done);
        set("run-error", run.error || "");
        box.dataset.status = run.status;
        if (run.status === "running") {
          setTimeout(tick, 500);
        } else {
          const what = run.run_id ? `run #${run.run_id}` : `(not recorded: ${run.status})`;
          set("run-title", `${box.dataset.kind} ${what}`);
          set("run-summary", run.lines.join("\n"));
          if (run.report) set("run-report", JSON.stringify(run.report, null, 2));
        }
      })
      .catch(() => setTimeout(tick, 2000));
  };
  if (box.dataset.status === "running") tick();
}

// The entity graph: click a node to light its ties, click it again to show all.
function focusGraph(svg) {
  svg.addEventListener("click", (event) => {
    const node = event.target.closest(".node");
    const name = node && !node.classList.contains("lit") ? node.dataset.name : null;
    svg.classList.toggle("focus", name !== null);
    svg.querySelectorAll(".lit").forEach((el) => el.classList.remove("lit"));
    if (name === null) return;
    node.classList.add("lit");
    svg.querySelectorAll("line").forEach((line) => {
      if (line.dataset.a === name || line.dataset.b === name) {
        line.classList.add("lit");
        const other = line.dataset.a === name ? line.dataset.b : line.dataset.a;
        svg.querySelectorAll(".node").forEach((n) => {
          if (n.dataset.name === other) n.classList.add("lit");
        });
      }
    });
  });
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("[data-run]").forEach(followRun);
  document.querySelectorAll("svg.graph").forEach(focusGraph);
});
