// The rating page: each answer is saved at once (POST /api/rate/N with the write header).
"use strict";
(function () {
  const page = document.getElementById("rate-page");
  if (!page) return;
  const episode = page.dataset.episode;
  for (const set of document.querySelectorAll("fieldset.question")) {
    for (const button of set.querySelectorAll("button")) {
      button.addEventListener("click", async () => {
        const saved = set.querySelector(".saved");
        saved.textContent = "saving…";
        const resp = await fetch(`/api/rate/${episode}`, {
          method: "POST",
          headers: { "Content-Type": "application/json", "X-Wac-Review": "1" },
          body: JSON.stringify({ kind: set.dataset.kind, value: button.dataset.value === "true" }),
        });
        if (!resp.ok) {
          saved.textContent = "not saved: " + ((await resp.json()).error || resp.status);
          return;
        }
        for (const b of set.querySelectorAll("button")) b.classList.toggle("on", b === button);
        saved.textContent = "saved";
      });
    }
  }
})();
