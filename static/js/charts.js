// The overview's three line charts (inline SVG drawn by units.js' lineChart) over the last hour: utilisation
// per resource, pending/running gangs, and pending demand per resource (what the scheduling
// cycles left pending, as a share of capacity: above 100% the axis grows). Data comes from
// <script id="chart-data">, rendered by the server (dashboard/pages/charts.py);
// window.gangschedCharts.push(point) lets the live layer append a point. Each line is a
// <path data-series="..." data-last="..."> whose data-last is its newest value; its legend a
// <ul class="chart-legend"> under the chart. Amounts as units.js writes them (the server's
// display_quantity), exact on hover.
//
// Live: on every "gangsched:gang" event from live.js, at most once every REFRESH_MS,
// /api/v1/cluster/ is re-read; the capacity bars (#overview-bars .bar[data-resource]), the
// counts by state ([data-count]; only when #overview-counts has data-scope="all", as the API
// counts every gang) are updated and a point (now) is appended to the charts, its demand
// from the API's pendingDemand (the latest cycle's).
(function () {
  "use strict";
  var COLORS = ["#1c7ed6", "#2f9e44", "#e8590c", "#ae3ec9", "#e03131"];
  var REFRESH_MS = 2000;
  var units = window.gangschedUnits;
  var percent = function (v) { return Math.round(v) + "%"; };

  // The hour is drawn from the minute before anything happened (no empty hour before a fresh
  // start): the first point with a cycle, a gang, usage or demand, less one.
  function drawn(points) {
    var busy = function (p) {
      var any = function (m) { return Object.keys(m || {}).some(function (k) { return m[k] > 0; }); };
      return p.cycles > 0 || p.pending > 0 || p.running > 0 || any(p.util) || any(p.demand);
    };
    for (var i = 0; i < points.length; i++) if (busy(points[i])) return points.slice(Math.max(0, i - 1));
    return points.slice(-2);
  }

  function render(data) {
    var points = drawn(data.points);
    var util = document.getElementById("chart-util");
    var gangs = document.getElementById("chart-gangs");
    if (util) {
      units.lineChart(util, points, data.resources.map(function (r, n) {
        var value = function (p) { return (p.util || {})[r]; };
        return { key: r, color: COLORS[n % COLORS.length], value: value,
                 label: function (p) { return r + " " + percent(value(p) || 0); } };
      }), { max: 100, resource: "%", tick: percent });
    }
    if (gangs) {
      units.lineChart(gangs, points, ["pending", "running"].map(function (k, n) {
        var value = function (p) { return p[k]; };
        return { key: k, color: COLORS[n], value: value, label: function (p) { return k + " " + (value(p) || 0); } };
      }), { resource: "gangs", tick: function (v) { return String(Math.round(v * 10) / 10); } });
    }
    var demand = document.getElementById("chart-demand");
    if (demand) {
      // The legend names what is pending now as people read it: "cpu 16.5 (250%)", the exact
      // amount on hover.
      units.lineChart(demand, points, data.resources.map(function (r, n) {
        var left = function (p) { return ((p && p.demand_amounts) || {})[r] || 0; };
        var value = function (p) { return (p.demand || {})[r]; };
        var last = points[points.length - 1];
        return {
          key: r,
          color: COLORS[n % COLORS.length],
          value: value,
          label: function (p) { return r + " " + units.display(r, left(p)) + " (" + percent(value(p) || 0) + ")"; },
          title: r + ": pending requests " + units.exact(r, left(last)) + ", % of capacity",
        };
      }), { max: 100, resource: "%", tick: percent });
    }
  }

  function start() {
    var source = document.getElementById("chart-data");
    if (!source) return;
    var data = JSON.parse(source.textContent);
    render(data);
    window.addEventListener("resize", function () { render(data); });
    window.gangschedCharts = {
      data: data,
      push: function (point) {
        data.points.push(point);
        if (data.points.length > 60) data.points.shift();
        render(data);
      },
    };
  }

  function applyCluster(summary) {
    var resources = summary.resources || {};
    var bars = document.querySelectorAll("#overview-bars .bar[data-resource]");
    for (var i = 0; i < bars.length; i++) {
      var bar = bars[i];
      var name = bar.getAttribute("data-resource");
      var r = resources[name] || { capacity: 0, used: 0 };
      var pct = r.capacity ? Math.min(100, Math.round((100 * r.used) / r.capacity)) : (r.used ? 100 : 0);
      var label = units.display(name, r.used) + " / " + units.display(name, r.capacity);
      bar.setAttribute("data-capacity", r.capacity);
      bar.setAttribute("data-used", r.used);
      bar.setAttribute("title", name + ": " + units.exact(name, r.used) + " / " + units.exact(name, r.capacity));
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

  var trigger = window.gangschedRefresher({
    ms: REFRESH_MS,
    url: function () { return "/api/v1/cluster/"; },
    apply: applyCluster,
  });

  function onGang() {
    if (document.getElementById("overview-counts")) trigger();
  }

  document.addEventListener("gangsched:gang", onGang);
  document.addEventListener("gangsched:caught-up", onGang);

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
