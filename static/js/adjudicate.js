// Keyboard adjudication: 1 / 2 / 0 choose, Ctrl+Enter submits and loads the next item, s skips, ? helps.
// After a blind verdict (data-step="reveal") plain Enter keeps or changes it and goes on.
// The listener sits on the document, so it keeps working after htmx swaps in the next item.
document.addEventListener("keydown", (event) => {
  const form = document.getElementById("verdict-form");
  if (!form) return;
  const typing = event.target.matches("textarea, input[type=text]");
  if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
    event.preventDefault();
    form.requestSubmit();
    return;
  }
  if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.key === "Enter" && form.dataset.step === "reveal") {
    event.preventDefault();
    form.requestSubmit();
    return;
  }
  if (["0", "1", "2"].includes(event.key)) {
    const choice = form.querySelector(`input[name=verdict][value="${event.key}"]`);
    if (choice) { choice.checked = true; choice.focus(); event.preventDefault(); }
  } else if (event.key === "s") {
    document.getElementById("skip-form")?.requestSubmit();
  } else if (event.key === "?") {
    const help = document.getElementById("shortcuts");
    if (help) { help.open ? help.close() : help.showModal(); }
  }
});
