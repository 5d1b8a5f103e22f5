// The overview's three line charts (inline SVG, no library) over the last hour: utilisation
// per resource, pending/running gangs, and pending demand per resource (what the scheduling
// cycles left pending, as a share of capacity: above 100% the axis grows). Data comes from
// <script id="chart-data">, rendered by the server (dashboard/pages/charts.py);
// window.gangschedCharts.push(point) lets the live layer append a point. Each line is a
// <path data-series="..." data-last="..."> whose data-last is its newest value.
//
// Live: on every "gangsched:gang" event from live.js, at most once every REFRESH_MS,
// /api/v1/cluster/ is re-read; the capacity bars (#overview-bars .bar[data-resource]), the
// counts by state ([data-count]; only when #overview-counts has data-scope="all", as the API
// counts every gang) are updated and a point (now) is appended to the charts, its demand
// from the API's pendingDemand (the latest cycle's).
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var W = 600, H = 160, PAD = { l: 34, r: 8, t: 8, b: 18 };
  var COLORS = ["#1c7ed6", "#2f9e44", "#e8590c", "#ae3ec9", "#e03131"];
  var REFRESH_MS = 2000;

  function el(name, attrs, text) {
    var node = document.createElementNS(SVG, name);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function draw(svg, points, series, fixedMax) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    if (!points.length) return;
    var max = fixedMax || 1;
    series.forEach(function (s) {
      points.forEach(function (p) { max = Math.max(max, s.value(p) || 0); });
    });
    var x = function (i) { return PAD.l + (W - PAD.l - PAD.r) * (points.length < 2 ? 0 : i / (points.length - 1)); };
    var y = function (v) { return H - PAD.b - (H - PAD.t - PAD.b) * (v / max); };
    [0, 0.5, 1].forEach(function (f) {
      var v = max * f;
      svg.appendChild(el("line", { x1: PAD.l, x2: W - PAD.r, y1: y(v), y2: y(v), stroke: "#e9ecef" }));
      svg.appendChild(el("text", { x: 2, y: y(v) + 3 }, String(Math.round(v))));
    });
    svg.appendChild(el("text", { x: PAD.l, y: H - 4 }, "-60 min"));
    svg.appendChild(el("text", { x: W - PAD.r - 24, y: H - 4 }, "now"));
    var legend = PAD.l + 6;
    series.forEach(function (s, n) {
      var d = points.map(function (p, i) { return (i ? "L" : "M") + x(i).toFixed(1) + "," + y(s.value(p) || 0).toFixed(1); }).join("");
      var color = COLORS[n % COLORS.length];
      var last = s.value(points[points.length - 1]) || 0;
      var path = el("path", { d: d, fill: "none", stroke: color, "stroke-width": 1.8, "data-series": s.key || s.name, "data-last": last });
      if (s.title) path.appendChild(el("title", {}, s.title));
      svg.appendChild(path);
      var label = s.label ? s.label(points[points.length - 1]) : s.name;
      svg.appendChild(el("text", { x: legend, y: PAD.t + 8, fill: color }, label));
      legend += Math.max(110, 6 * label.length + 14);
    });
  }

  function render(data) {
    var util = document.getElementById("chart-util");
    var gangs = document.getElementById("chart-gangs");
    if (util) {
      draw(util, data.points, data.resources.map(function (r) {
        return { name: r, value: function (p) { return p.util[r]; } };
      }), 100);
    }
    if (gangs) {
      draw(gangs, data.points, [
        { name: "pending", value: function (p) { return p.pending; } },
        { name: "running", value: function (p) { return p.running; } },
      ]);
    }
    var demand = document.getElementById("chart-demand");
    if (demand) {
      // The legend names what is pending now as Kubernetes writes it: "cpu 120 (250%)".
      draw(demand, data.points, data.resources.map(function (r) {
        var left = function (p) { return amount(r, ((p && p.demand_amounts) || {})[r] || 0); };
        return {
          key: r,
          name: r,
          value: function (p) { return (p.demand || {})[r]; },
          label: function (p) { return r + " " + left(p) + " (" + Math.round((p.demand || {})[r] || 0) + "%)"; },
          title: r + ": pending requests, % of capacity",
        };
      }), 100);
    }
  }

  function start() {
    var source = document.getElementById("chart-data");
    if (!source) return;
    var data = JSON.parse(source.textContent);
    render(data);
    window.gangschedCharts = {
      data: data,
      push: function (point) {
        data.points.push(point);
        if (data.points.length > 60) data.points.shift();
        render(data);
      },
    };
  }

  // As scheduler_core.engine.quantity.format_quantity writes it (exact, as Kubernetes does):
  // whole cores or milli-CPU; bytes in the largest exact binary unit, else decimal unit.
  var BINARY = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"], DECIMAL = ["", "k", "M", "G", "T", "P", "E"];
  function amount(resource, value) {
    if (resource === "cpu") return value % 1000 === 0 ? String(value / 1000) : value + "m";
    var bytes = ["memory", "ephemeral-storage", "storage"].indexOf(resource) >= 0 || /^hugepages-/.test(resource);
    if (!bytes || !value) return String(value);
    var base = value % 1024 === 0 ? 1024 : 1000, units = base === 1024 ? BINARY : DECIMAL, power = 0;
    while (power < units.length - 1 && value % Math.pow(base, power + 1) === 0) power++;
    return value / Math.pow(base, power) + units[power];
  }

  function applyCluster(summary) {
    var resources = summary.resources || {};
    var bars = document.querySelectorAll("#overview-bars .bar[data-resource]");
    for (var i = 0; i < bars.length; i++) {
      var bar = bars[i];
      var name = bar.getAttribute("data-resource");
      var r = resources[name] || { capacity: 0, used: 0 };
      var pct = r.capacity ? Math.min(100, Math.round((100 * r.used) / r.capacity)) : (r.used ? 100 : 0);
      var label = amount(name, r.used) + " / " + amount(name, r.capacity);
      bar.setAttribute("data-capacity", r.capacity);
      bar.setAttribute("data-used", r.used);
      bar.setAttribute("title", name + ": " + label);
      var fill = bar.querySelector(".bar-fill");
      if (fill) {
        fill.style.width = pct + "%";
        fill.classList.toggle("hot", pct >= 90);
      }
      var text = bar.querySelector(".bar-label");
      if (text) text.textContent = name + " " + label + " (" + pct + "%)";
    }
    var phases = summary.gangsByPhase || {};
    var scope = document.getElementById("overview-counts");
    var allGangs = scope && scope.getAttribute("data-scope") === "all";
    if (allGangs) {
      var total = 0;
      var cells = scope.querySelectorAll("[data-count]");
      for (var j = 0; j < cells.length; j++) {
        var n = phases[cells[j].getAttribute("data-count")] || 0;
        cells[j].textContent = String(n);
      }
      Object.keys(phases).forEach(function (k) { total += phases[k]; });
      var totalCell = scope.querySelector("[data-count-total]");
      if (totalCell) totalCell.textContent = "(" + total + ")";
    }
    var charts = window.gangschedCharts;
    if (!charts) return;
    var last = charts.data.points[charts.data.points.length - 1] || { pending: 0, running: 0 };
    var util = {}, demand = {}, demandAmounts = {};
    var pendingDemand = summary.pendingDemand || {};
    charts.data.resources.forEach(function (name) {
      var r = resources[name];
      util[name] = r && r.capacity ? Math.round((1000 * Math.max(r.used, 0)) / r.capacity) / 10 : 0;
      demandAmounts[name] = pendingDemand[name] || 0;
      demand[name] = r && r.capacity ? Math.round((1000 * demandAmounts[name]) / r.capacity) / 10 : 0;
    });
    charts.push({
      t: new Date().toISOString(),
      util: util,
      demand: demand,
      demand_amounts: demandAmounts,
      // A submitter's chart counts only their own gangs: keep its last counts.
      pending: allGangs ? (phases.Pending || 0) + (phases.Scheduling || 0) : last.pending,
      running: allGangs ? phases.Running || 0 : last.running,
      cycles: 0,
      cycle_ms: 0,
    });
  }

  var lastRefresh = 0;
  var timer = null;
  var fetching = false;

  function refreshCluster() {
    timer = null;
    if (fetching) {
      timer = window.setTimeout(refreshCluster, REFRESH_MS);
      return;
    }
    fetching = true;
    lastRefresh = Date.now();
    fetch("/api/v1/cluster/", { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (summary) { if (summary) applyCluster(summary); })
      .catch(function () {})
      .then(function () { fetching = false; });
  }

  function onGang() {
    if (!document.getElementById("overview-counts") || timer) return;
    // Leading edge now, then at most one trailing refresh per REFRESH_MS.
    var wait = Math.max(0, lastRefresh + REFRESH_MS - Date.now());
    timer = window.setTimeout(refreshCluster, wait);
  }

  document.addEventListener("gangsched:gang", onGang);
  document.addEventListener("gangsched:caught-up", onGang);

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
