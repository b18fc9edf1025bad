// What an explorer reads from the page it sits in: the page's colour mode (JupyterLab's theme, the
// book's light/dark/auto switch or the reader's system setting), and a watch on its changes.

/**
 * The page's mode from what the page says: pydata-sphinx-theme's data-theme on <html> ("light" or
 * "dark", already resolved from "auto"), else JupyterLab's data-jp-theme-light on <body>
 * ("true"/"false"), else, where the book's switch says "auto", the system's prefers-color-scheme.
 * @param {{theme?: string, mode?: string, jpThemeLight?: string, prefersDark?: boolean}} page
 * @returns {"light" | "dark" | null}  null where the page says nothing (the explorer's own style)
 */
export function pageStyleOf({ theme, mode, jpThemeLight, prefersDark }) {
  if (theme === "light" || theme === "dark") return theme;
  if (jpThemeLight === "true") return "light";
  if (jpThemeLight === "false") return "dark";
  if (mode === "auto") return prefersDark ? "dark" : "light";
  return null;
}

const DARK_QUERY = "(prefers-color-scheme: dark)";

/** The mode of the page this module runs in, null where there is no page or it says nothing. */
export function pageStyle() {
  if (typeof document === "undefined") return null;
  const html = document.documentElement;
  return pageStyleOf({
    theme: html.dataset.theme,
    mode: html.dataset.mode,
    jpThemeLight: document.body?.dataset.jpThemeLight,
    prefersDark: typeof matchMedia === "function" && matchMedia(DARK_QUERY).matches,
  });
}

/**
 * Call `onChange()` whenever the page's mode may have changed (the attributes above, the system
 * setting). Returns the function that stops watching; a no-op where there is no page.
 */
export function watchPageStyle(onChange) {
  if (typeof document === "undefined" || typeof MutationObserver === "undefined") return () => {};
  const observer = new MutationObserver(onChange);
  observer.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme", "data-mode"] });
  if (document.body) observer.observe(document.body, { attributes: true, attributeFilter: ["data-jp-theme-light"] });
  const media = typeof matchMedia === "function" ? matchMedia(DARK_QUERY) : null;
  media?.addEventListener("change", onChange);
  return () => {
    observer.disconnect();
    media?.removeEventListener("change", onChange);
  };
}
