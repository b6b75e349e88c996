// A run form's temperature is not sent to reasoning models (they take only their default): where every
// spec named is one, the field turns read-only and says so. The server decides the same way
// (evalhub.llm.capabilities); this only shows it while the specs are typed.
(function () {
  "use strict";
  const field = document.querySelector("input[data-ignored-by-reasoning]");
  const specs = document.querySelector("[data-specs]");
  if (!field || !specs) return;
  const reasoningName = new RegExp(field.dataset.ignoredByReasoning);
  const chatName = field.dataset.notReasoning ? new RegExp(field.dataset.notReasoning) : null;
  const note = document.createElement("small");
  note.className = "muted";
  note.setAttribute("aria-live", "polite");
  field.insertAdjacentElement("afterend", note);

  function isReasoning(spec) {
    const [head, query = ""] = spec.trim().split("?");
    const said = new URLSearchParams(query).get("reasoning");
    if (said !== null) return ["true", "1"].includes(said.toLowerCase());
    const provider = head.split(":")[0];
    if (!["openai", "azure"].includes(provider)) return false;
    const name = head.slice(provider.length + 1).split("|").pop().split("/").pop().toLowerCase();
    return reasoningName.test(name) && !(chatName && chatName.test(name));
  }

  function update() {
    const named = specs.value.split("\n").filter((line) => line.trim());
    const ignored = named.length > 0 && named.every(isReasoning);
    field.readOnly = ignored;  // still sent: the form keeps its value; the client leaves it out
    field.setAttribute("aria-disabled", ignored ? "true" : "false");
    note.textContent = ignored ? " Not sent: reasoning models take only their own default temperature." : "";
  }
  specs.addEventListener("input", update);
  update();
})();
