// The Assistant page: empty the request box once the answer has arrived.
document.addEventListener("htmx:afterRequest", (event) => {
  const form = event.target;
  if (form instanceof HTMLFormElement && form.classList.contains("agent-ask") && event.detail.successful) {
    form.reset();
    const box = form.querySelector("textarea");
    if (box) box.focus();
  }
});
