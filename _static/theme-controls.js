/* The theme's controls, run by the book instead of the theme's two script bundles
   (pydata-sphinx-theme.js and Bootstrap's bootstrap.js, 30 kB compressed; _templates/layout.html
   leaves them out). Their start-up read the layout of every code block and of the header
   before the page had settled, which forces a full layout of a long chapter, sections that
   CSS lets the browser skip included: on a phone's slower processor, half a second of blocked
   main thread per chapter (benchmarks/lighthouse.py). This file does what the pages use of
   them, the same way for the reader, and reads the layout only where the browser has just
   computed it (a ResizeObserver's or an IntersectionObserver's report):
   - the colour mode: light, dark, or the system's (auto), as the theme stores it;
   - search: the search button and Ctrl+K (⌘K on a Mac) open the search dialog;
   - on a narrow screen, the chapter list and the page's contents open as dialogs;
   - the page's contents mark the section being read;
   - the header's menus (download, run this chapter) open by click or keys;
   - a code block or output that scrolls sideways takes keyboard focus;
   - the back-to-top button shows while the reader scrolls up.
   Relies on the themes' markup (the ids looked up below, in their templates) and on the colour
   mode stored as pydata-sphinx-theme.js stores it (localStorage "mode" and "theme"):
   tests/library/test_internals.py fails, naming them, if they move. */
(() => {
  "use strict";
  const root = document.documentElement;

  /* Colour mode ---------------------------------------------------------------------------- */
  const prefersDark = window.matchMedia("(prefers-color-scheme: dark)");

  function setMode(mode) {
    if (!["light", "dark", "auto"].includes(mode)) mode = "auto";
    const theme = mode === "auto" ? (prefersDark.matches ? "dark" : "light") : mode;
    // (written only when it changes: a new value restyles the whole page)
    if (root.dataset.mode !== mode) root.dataset.mode = mode;
    if (root.dataset.theme !== theme) root.dataset.theme = theme;
    // Bootstrap 5.2's menus take their dark colours from a class, not from data-theme
    document.querySelectorAll(".dropdown-menu").forEach((menu) => {
      menu.classList.toggle("dropdown-menu-dark", theme === "dark");
    });
    localStorage.setItem("mode", mode);
    localStorage.setItem("theme", theme);
    prefersDark.onchange = mode === "auto" ? () => setMode("auto") : null;
  }

  function cycleMode() {
    const current = localStorage.getItem("mode") || root.dataset.defaultMode || "auto";
    // the mode after "auto" always changes the colours
    const order = prefersDark.matches ? ["auto", "light", "dark"] : ["auto", "dark", "light"];
    setMode(order[(order.indexOf(current) + 1) % order.length]);
  }

  /* Dialogs: search, and the sidebars on a narrow screen ------------------------------------- */
  function closeOnBackdropClick(event) {
    const dialog = event.currentTarget;
    // a click on the ::backdrop lands on the dialog, outside its box
    const box = dialog.getBoundingClientRect();
    const outside =
      event.clientX < box.left || event.clientX > box.right ||
      event.clientY < box.top || event.clientY > box.bottom;
    if (dialog.open && outside) dialog.close();
  }

  const onMac = /^(Mac|iPhone|iPad)/.test(navigator.platform);

  function setUpSearch() {
    const dialog = document.getElementById("pst-search-dialog");
    if (!dialog) return;
    const toggleSearch = () => {
      // a search field the page shows already takes the focus; otherwise the dialog opens
      const shown = [...document.querySelectorAll("form.bd-search input")].find(
        (input) => !dialog.contains(input) && input.checkVisibility()
      );
      if (shown) {
        if (document.activeElement === shown) shown.blur();
        else shown.focus();
      } else if (dialog.open) {
        dialog.close();
      } else {
        dialog.showModal();
      }
    };
    document.querySelectorAll(".search-button__button").forEach((button) => {
      button.addEventListener("click", toggleSearch);
    });
    if (onMac) {
      document.querySelectorAll(".search-button__kbd-shortcut kbd.kbd-shortcut__modifier")
        .forEach((kbd) => (kbd.textContent = "⌘"));
    }
    window.addEventListener(
      "keydown",
      (event) => {
        const modifier = onMac ? event.metaKey && !event.ctrlKey : event.ctrlKey && !event.metaKey;
        if (modifier && !event.shiftKey && !event.altKey && /^k$/i.test(event.key)) {
          event.preventDefault();
          toggleSearch();
        }
      },
      true
    );
    dialog.addEventListener("click", closeOnBackdropClick);
  }

  function setUpSidebarDialogs() {
    // On a narrow screen a sidebar's content moves into its dialog while the dialog is open
    const move = (from, to) => {
      to.append(...from.childNodes);
      for (const name of [...from.classList]) {
        from.classList.remove(name);
        to.classList.add(name);
      }
    };
    for (const side of ["primary", "secondary"]) {
      const toggle = document.querySelector(`.${side}-toggle`);
      const dialog = document.getElementById(`pst-${side}-sidebar-modal`);
      const sidebar = document.getElementById(`pst-${side}-sidebar`);
      if (!toggle || !dialog || !sidebar) continue;
      // (on a wide screen sphinx-book-theme.js hides the chapter list instead, and stops this)
      toggle.addEventListener("click", (event) => {
        event.preventDefault();
        event.stopPropagation();
        const focused = document.activeElement;
        move(sidebar, dialog);
        dialog.showModal();
        dialog.addEventListener("close", () => focused?.focus?.(), { once: true });
      });
      dialog.addEventListener("click", closeOnBackdropClick);
      dialog.addEventListener("keydown", (event) => {
        // sphinx_highlight.js takes Escape for itself
        if (event.key === "Escape") {
          event.preventDefault();
          event.stopPropagation();
          dialog.close();
        }
      });
      dialog.addEventListener("close", () => move(dialog, sidebar));
    }
  }

  /* The chapter list keeps its scroll position from page to page ---------------------------- */
  function keepChapterListScroll() {
    const sidebar = document.querySelector("div.bd-sidebar");
    if (!sidebar || !document.querySelector(".bd-docs-nav")) return;
    const stored = parseInt(sessionStorage.getItem("sidebar-scroll-top"), 10);
    // after the first paint, when the layout this reads is there already
    if (stored > 0) requestAnimationFrame(() => (sidebar.scrollTop = stored));
    window.addEventListener("pagehide", () => {
      sessionStorage.setItem("sidebar-scroll-top", sidebar.scrollTop);
    });
  }

  /* The page's contents mark the section being read ----------------------------------------- */
  function followReading() {
    const nav = document.getElementById("pst-page-toc-nav");
    const header = document.getElementById("pst-header");
    if (!nav || !header) return;
    const links = [...nav.querySelectorAll("a")];
    const entries = [...nav.querySelectorAll(".toc-entry")];
    const activate = (link) => {
      for (const each of links) {
        each.classList.toggle("active", each === link);
        if (each === link) each.setAttribute("aria-current", "true");
        else each.removeAttribute("aria-current");
      }
      for (const entry of entries) entry.classList.toggle("active", entry.contains(link));
    };
    const linkOf = new Map();
    for (const link of links) {
      const id = decodeURIComponent(link.hash.slice(1));
      const target = id && link.getAttribute("href").startsWith("#") && document.getElementById(id);
      if (target) linkOf.set(target.querySelector("h1, h2, h3, h4, h5, h6") || target, link);
    }
    // a link followed is marked at once, and scrolling to it does not mark another
    let pausedUntil = 0;
    const follow = (hash) => {
      const link = links.find((each) => each.hash === hash);
      if (hash.length > 1 && link) {
        pausedUntil = performance.now() + 1000;
        activate(link);
      }
    };
    follow(location.hash);
    window.addEventListener("hashchange", () => follow(location.hash));
    window.addEventListener("click", (event) => {
      const link = event.target.closest("a");
      if (link && link.hash === location.hash && link.origin === location.origin) follow(link.hash);
    });
    // the section whose heading is in the top third of the window, below the header, whose
    // height a ResizeObserver reports (and reports again when it changes)
    let observer;
    new ResizeObserver(([report]) => {
      observer?.disconnect();
      const height = Math.round(report.borderBoxSize[0].blockSize);
      observer = new IntersectionObserver(
        (reports) => {
          const seen = reports.filter((each) => each.isIntersecting).pop();
          if (seen && performance.now() > pausedUntil) activate(linkOf.get(seen.target));
        },
        { rootMargin: `-${height}px 0px -70% 0px`, threshold: 0 }
      );
      for (const heading of linkOf.keys()) observer.observe(heading);
    }).observe(header);
  }

  /* The header's menus ------------------------------------------------------------------------- */
  function setUpMenus() {
    const toggles = [...document.querySelectorAll('[data-bs-toggle="dropdown"]')];
    const menuOf = (toggle) => toggle.parentElement.querySelector(".dropdown-menu");
    const close = (toggle) => {
      toggle.classList.remove("show");
      toggle.setAttribute("aria-expanded", "false");
      menuOf(toggle).classList.remove("show");
    };
    const open = (toggle) => {
      toggles.filter((other) => other !== toggle).forEach(close);
      toggle.classList.add("show");
      toggle.setAttribute("aria-expanded", "true");
      menuOf(toggle).classList.add("show");
    };
    const items = (toggle) => [...menuOf(toggle).querySelectorAll(".dropdown-item")];
    for (const toggle of toggles) {
      toggle.addEventListener("click", () => {
        if (toggle.classList.contains("show")) close(toggle);
        else open(toggle);
      });
      toggle.parentElement.addEventListener("keydown", (event) => {
        const shown = toggle.classList.contains("show");
        if (event.key === "Escape" && shown) {
          close(toggle);
          toggle.focus();
        } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
          event.preventDefault();
          if (!shown) open(toggle);
          const list = items(toggle);
          const at = list.indexOf(document.activeElement);
          const step = event.key === "ArrowDown" ? 1 : -1;
          list[at < 0 ? (step > 0 ? 0 : list.length - 1) : (at + step + list.length) % list.length]?.focus();
        }
      });
      toggle.parentElement.addEventListener("focusout", (event) => {
        if (!toggle.parentElement.contains(event.relatedTarget)) close(toggle);
      });
    }
    document.addEventListener("click", (event) => {
      for (const toggle of toggles) {
        if (!toggle.parentElement.contains(event.target)) close(toggle);
      }
    });
  }

  /* Blocks that scroll sideways take keyboard focus ------------------------------------------- */
  const SCROLLABLE = [
    "pre",
    ".cell_output > .output",
    ".jp-RenderedHTMLCommon",
    ".pst-scrollable-table-container",
  ].join(", ");

  function tabStopsOnScrollableBlocks() {
    const main = document.getElementById("main-content");
    if (!main) return;
    // Every block takes the focus until its size is known, so that none that scrolls is ever
    // out of reach of the keys; the ResizeObserver reports a block's size once the browser has
    // laid it out (a section far below the window: when it nears the window) and whenever it
    // changes, and the block keeps its tab stop only if its content overflows.
    const measured = new ResizeObserver((reports) => {
      for (const { target } of reports) {
        const overflows =
          target.scrollWidth > target.clientWidth || target.scrollHeight > target.clientHeight;
        target.tabIndex = overflows ? 0 : -1;
      }
    });
    const watch = (block) => {
      if (!block.hasAttribute("tabindex")) block.tabIndex = 0;
      measured.observe(block);
    };
    main.querySelectorAll(SCROLLABLE).forEach(watch);
    // widgets add their outputs after the page has loaded
    new MutationObserver((changes) => {
      for (const change of changes) {
        for (const node of change.addedNodes) {
          if (node.nodeType !== Node.ELEMENT_NODE) continue;
          if (node.matches(SCROLLABLE)) watch(node);
          node.querySelectorAll(SCROLLABLE).forEach(watch);
        }
      }
    }).observe(main, { subtree: true, childList: true });
  }

  /* Back to top ---------------------------------------------------------------------------- */
  function backToTop() {
    const button = document.getElementById("pst-back-to-top");
    const header = document.querySelector(".bd-header");
    if (!button || !header) return;
    button.addEventListener("click", () => window.scrollTo({ top: 0 }));
    // (the position is first read at the first scroll: read at start, it forces a layout)
    let last = null;
    window.addEventListener(
      "scroll",
      () => {
        const y = window.scrollY;
        const up = last !== null && y < last && y > header.offsetHeight;
        button.style.display = up ? "block" : "none";
        last = y;
      },
      { passive: true }
    );
  }

  function start() {
    setMode(root.dataset.mode);
    document.querySelectorAll(".theme-switch-button").forEach((button) => {
      button.addEventListener("click", cycleMode);
    });
    setUpSearch();
    setUpSidebarDialogs();
    keepChapterListScroll();
    followReading();
    setUpMenus();
    tabStopsOnScrollableBlocks();
    backToTop();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
