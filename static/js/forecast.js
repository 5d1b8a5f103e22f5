// The gang page's "When it will start" card, kept live: when a forecast run was stored
// ("gangsched:forecast" from live.js, the forecast.updated notice) or the gang changed
// ("gangsched:gang" for this gang: it may have started), the page's own address with
// ?live=forecast is read (dashboard/pages/forecasts.py), which answers the card as a reload
// would render it, and it replaces #gang-forecast. window.gangschedForecast counts the answers
// that changed it (tests).
(function () {
  "use strict";
  var REFRESH_MS = 1000;
  var state = (window.gangschedForecast = { answers: 0, refreshes: 0 });

  function box() {
    return document.getElementById("gang-forecast");
  }

  function apply(body) {
    var card = box();
    if (!card || typeof body.html !== "string") return;
    state.answers += 1;
    if (card.innerHTML === body.html) return;
    card.innerHTML = body.html;
    if (window.gangschedLive) window.gangschedLive.formatTimes(card);
    state.refreshes += 1;
  }

  var trigger = window.gangschedRefresher({
    ms: REFRESH_MS,
    url: function () { return window.location.pathname + "?live=forecast"; },
    apply: apply,
  });

  document.addEventListener("gangsched:forecast", function () { if (box()) trigger(); });
  document.addEventListener("gangsched:gang", function (event) {
    var card = box();
    var gang = event.detail && event.detail.gang;
    if (card && gang && gang.key === card.getAttribute("data-gang")) trigger();
  });
})();
