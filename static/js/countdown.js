// The gang page's timeout countdown. The server renders the rule (data-rule), where the gang
// stands (data-state) and the deadline (data-deadline, ISO 8601); this counts down to it once a
// second in the browser, so the line stays true between page loads without asking the server.
// Once the gang's state badge (kept live by live.js) leaves Pending/Scheduling, the timeout no
// longer applies and the countdown stops saying it will fire.
(function () {
  "use strict";

  var WAITING = ["Pending", "Scheduling"];

  function gangState() {
    var badge = document.querySelector("h1 .gang-state");
    return badge ? badge.getAttribute("data-state") || badge.textContent.trim() : "";
  }

  function render(element) {
    var deadline = Date.parse(element.dataset.deadline || "");
    var rule = element.dataset.rule || "";
    if (element.dataset.state !== "counting" || isNaN(deadline)) {
      return false;
    }
    var state = gangState();
    if (state && WAITING.indexOf(state) < 0) {
      element.dataset.state = "left";
      element.textContent = rule + ": no longer applies (" + state + ")";
      return false;
    }
    var left = Math.round((deadline - Date.now()) / 1000);
    var at = new Date(deadline).toLocaleTimeString([], { hour12: false });
    element.textContent =
      left > 0
        ? rule + ": times out in " + left + " s (at " + at + ")"
        : rule + ": due at " + at + ", times out at the next cycle";
    return true;
  }

  function tick() {
    var running = false;
    document.querySelectorAll(".timeout[data-deadline]").forEach(function (element) {
      running = render(element) || running;
    });
    if (running) {
      window.setTimeout(tick, 1000);
    }
  }

  document.addEventListener("DOMContentLoaded", tick);
})();
