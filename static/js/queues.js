// The Queues page (dashboard/pages/queues.py): a chart per resource of the charted queue's last
// hour (usage, fair share, guarantee; units.js' lineChart, as the overview's), and the
// tree and waiting lanes kept live. On every "gangsched:gang" event from live.js (and after a
// reconnect's catch-up), at most once every REFRESH_MS (refresher.js), /queues/live/ is
// re-read: each row's badges, state, waiting gangs, bars (.queue-bar[data-queue][data-resource],
// data-used etc.) and borrowed / lent / pending are rewritten, the waiting lanes replaced by
// the server's rendering of them, and a point (now) is appended to the chart from the charted
// queue's row.
// window.gangschedQueues exposes the chart data and the last rows (tests read them).
(function () {
  "use strict";
  var SERIES = [
    { key: "usage", name: "usage", color: "#1c7ed6" },
    { key: "fair_share", name: "fair share", color: "#e8590c" },
    { key: "guarantee", name: "guarantee", color: "#343a40" },
  ];
  var REFRESH_MS = 2000;
  var MAX_POINTS = 60;
  var units = window.gangschedUnits;

  // One resource's chart: the axis and the legend in one unit, the unit of the axis' top
  // (250000Mi of usage reads "244Gi" on both), the exact amounts on hover.
  function drawResource(svg, resource, points) {
    var value = function (p, key) { return (p[key] || {})[resource] || 0; };
    var max = 0;
    points.forEach(function (p) { SERIES.forEach(function (s) { max = Math.max(max, value(p, s.key)); }); });
    var unit = units.unit(resource, max > 0 ? units.axisMax(resource, max) : 0);
    var last = points[points.length - 1];
    units.lineChart(svg, points, SERIES.map(function (s) {
      return {
        key: s.key,
        color: s.color,
        value: function (p) { return value(p, s.key); },
        label: function (p) { return s.name + " " + units.display(resource, value(p, s.key), unit); },
        title: last ? s.name + ": " + units.exact(resource, value(last, s.key)) : s.name,
      };
    }), { resource: resource, tick: function (v) { return units.display(resource, v, unit); } });
  }

  function render(data) {
    var box = document.getElementById("queue-charts");
    if (!box) return;
    // Every figure first, then the drawing: a chart is drawn at its size on screen, which
    // shrinks as figures join the grid.
    var svgs = data.resources.map(function (resource) {
      var svg = box.querySelector('svg[data-resource="' + resource + '"]');
      if (!svg) {
        var figure = document.createElement("figure");
        var caption = document.createElement("figcaption");
        caption.textContent = resource;
        svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
        svg.setAttribute("class", "chart");
        svg.setAttribute("role", "img");
        svg.setAttribute("data-resource", resource);
        svg.setAttribute("aria-label", resource + " of queue " + data.queue + " over the last hour");
        figure.appendChild(caption);
        figure.appendChild(svg);
        box.appendChild(figure);
      }
      return svg;
    });
    data.resources.forEach(function (resource, i) { drawResource(svgs[i], resource, data.points); });
    var note = box.querySelector(".empty");
    if (note && data.points.length) box.removeChild(note);
    if (!data.points.length && !note) {
      var none = document.createElement("p");
      none.className = "empty";
      none.textContent = "No samples in the last hour yet (one is kept each minute a scheduling cycle runs).";
      box.appendChild(none);
    }
  }

  // ---- the tree, live

  function cellOf(tr, selector) { return tr.querySelector(selector); }

  function barNode(row, bar) {
    var node = document.createElement("div");
    node.className = "bar queue-bar";
    node.setAttribute("data-queue", row.name);
    node.setAttribute("data-resource", bar.resource);
    node.setAttribute("data-used", bar.used);
    node.setAttribute("data-guarantee", bar.guarantee);
    node.setAttribute("data-fair-share", bar.fair_share == null ? "" : bar.fair_share);
    node.setAttribute("data-max", bar.max == null ? "" : bar.max);
    node.setAttribute("title", bar.resource + ": " + bar.exact_label);
    var fill = document.createElement("span");
    fill.className = "bar-fill" + (bar.hot ? " hot" : "");
    fill.style.width = bar.used_pct + "%";
    node.appendChild(fill);
    var marks = [["mark-guarantee", bar.guarantee_pct], ["mark-fair", bar.fair_pct]];
    marks.forEach(function (m) {
      if (m[1] == null) return;
      var mark = document.createElement("span");
      mark.className = "bar-mark " + m[0];
      mark.style.left = m[1] + "%";
      node.appendChild(mark);
    });
    var label = document.createElement("span");
    label.className = "bar-label";
    label.textContent = bar.resource + " " + bar.label;
    node.appendChild(label);
    return node;
  }

  function lendingNode(bar) {
    var line = document.createElement("div");
    line.setAttribute("data-resource", bar.resource);
    line.appendChild(document.createTextNode(bar.resource + ": "));
    [["data-borrowed", bar.borrowed, bar.borrowed_text, bar.borrowed_exact],
     ["data-lent", bar.lent == null ? "" : bar.lent, bar.lent_text || "\u2014", bar.lent_exact],
     ["data-pending", bar.pending, bar.pending_text, bar.pending_exact]].forEach(function (part, i) {
      if (i) line.appendChild(document.createTextNode(" \u00b7 "));
      var span = document.createElement("span");
      span.setAttribute(part[0], part[1]);
      span.textContent = part[2];
      // The exact form on hover where the display rounds (as the server renders it).
      if (part[3] && part[3] !== part[2]) span.setAttribute("title", part[3]);
      line.appendChild(span);
    });
    return line;
  }

  function replaceChildren(parent, nodes, empty) {
    while (parent.firstChild) parent.removeChild(parent.firstChild);
    nodes.forEach(function (n) { parent.appendChild(n); });
    if (!nodes.length && empty) {
      var span = document.createElement("span");
      span.className = "empty";
      span.textContent = empty;
      parent.appendChild(span);
    }
  }

  function flagNode(flag) {
    var span = document.createElement("span");
    span.className = "queue-flag";
    span.setAttribute("data-flag", flag.flag);
    span.setAttribute("title", flag.title);
    span.textContent = flag.flag;
    return span;
  }

  function applyRow(tr, row) {
    var flags = cellOf(tr, ".queue-flags");
    if (flags) {
      while (flags.firstChild) flags.removeChild(flags.firstChild);
      (row.flags || []).forEach(function (flag) {
        flags.appendChild(document.createTextNode(" "));
        flags.appendChild(flagNode(flag));
      });
    }
    var state = cellOf(tr, ".queue-state");
    if (state) {
      var text = row.open ? "Open" : "Closed";
      state.textContent = text;
      state.setAttribute("data-state", text);
      state.className = "queue-state " + (row.open ? "queue-open" : "queue-closed");
    }
    var waiting = cellOf(tr, ".queue-waiting");
    if (waiting) {
      waiting.textContent = String(row.waiting_gangs);
      waiting.setAttribute("data-waiting", row.waiting_gangs);
    }
    var bars = cellOf(tr, ".queue-bars");
    if (bars) replaceChildren(bars, row.bars.map(function (bar) { return barNode(row, bar); }), "nothing used, guaranteed or limited");
    var lending = cellOf(tr, ".queue-lending");
    if (lending) replaceChildren(lending, row.bars.map(lendingNode));
  }

  // The waiting lanes, as the server renders them for the page (templates/dashboard/_queue_pending.html).
  function lanes(html) {
    var box = document.getElementById("queue-pending-lanes");
    if (box && typeof html === "string" && box.innerHTML !== html) box.innerHTML = html;
  }

  function apply(rows) {
    queues.rows = rows;
    rows.forEach(function (row) {
      var tr = document.querySelector('#queue-tree tr[data-queue="' + CSS.escape(row.name) + '"]');
      if (tr) applyRow(tr, row);
    });
    var data = queues.data;
    if (!data || !data.queue) return;
    var charted = rows.filter(function (row) { return row.name === data.queue; })[0];
    if (!charted) return;
    var point = { t: new Date().toISOString(), usage: {}, fair_share: {}, guarantee: {} };
    charted.bars.forEach(function (bar) {
      point.usage[bar.resource] = bar.used;
      point.guarantee[bar.resource] = bar.guarantee;
      if (bar.fair_share != null) point.fair_share[bar.resource] = bar.fair_share;
      if (data.resources.indexOf(bar.resource) < 0) data.resources.push(bar.resource);
    });
    data.points.push(point);
    while (data.points.length > MAX_POINTS) data.points.shift();
    render(data);
  }

  var queues = (window.gangschedQueues = { data: null, rows: null, refreshes: 0 });
  var trigger = window.gangschedRefresher({
    ms: REFRESH_MS,
    url: function () { return "/queues/live/"; },
    apply: function (body) {
      queues.refreshes += 1;
      apply(body.queues || []);
      lanes(body.pending_html);
    },
  });

  function onGang() {
    if (document.getElementById("queue-tree")) trigger();
  }

  function start() {
    var source = document.getElementById("queue-chart-data");
    if (!source) return;
    queues.data = JSON.parse(source.textContent);
    render(queues.data);
    window.addEventListener("resize", function () { render(queues.data); });
  }

  document.addEventListener("gangsched:gang", onGang);
  document.addEventListener("gangsched:forecast", onGang);  // each queue's next start
  document.addEventListener("gangsched:caught-up", onGang);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
