// A copy button for values shown once (a new API client's secret). Progressive: the button is
// hidden in the page and shown only here, so without this script the value is simply selected and
// copied by hand. Served by the portal itself, as its Content-Security-Policy requires.
document.querySelectorAll("button[data-copy]").forEach((button) => {
  const source = document.getElementById(button.dataset.copy);
  if (!source || !navigator.clipboard) return;
  button.hidden = false;
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(source.textContent);
      button.textContent = "Copied";
    } catch {
      button.textContent = "Copy failed: select the secret and copy it";
    }
  });
});
