"use strict";
// Interaction for profd's SVG flame graphs: click to zoom, search, details on hover.
var FG = (function () {
	var frames = [], charWidth = 7.2, pad = 10, width, details, matched, resetButton, zoomed = null;

	function label(name, w) {
		var n = Math.floor((w - 6) / charWidth), chars = Array.from(name);
		if (n < 3) return "";
		return chars.length <= n ? name : chars.slice(0, n - 2).join("") + "..";
	}
	function place(f, x, w) {
		f.rect.setAttribute("x", x.toFixed(1));
		f.rect.setAttribute("width", Math.max(w, 0).toFixed(1));
		f.text.setAttribute("x", (x + 3).toFixed(1));
		f.text.textContent = label(f.name, w);
		f.g.style.display = "";
	}
	function hide(f) { f.g.style.display = "none"; }
	function zoom(target) {
		var x0 = target.x, w0 = target.w, scale = (width - 2 * pad) / w0, eps = 0.011;
		zoomed = target;
		frames.forEach(function (f) {
			f.g.style.opacity = "";
			if (f.y <= target.y) {
				if (f.x >= x0 - eps && f.x + f.w <= x0 + w0 + eps) place(f, pad + (f.x - x0) * scale, f.w * scale);
				else hide(f);
			} else if (f.x <= x0 + eps && f.x + f.w >= x0 + w0 - eps) {
				place(f, pad, width - 2 * pad);
				f.g.style.opacity = "0.6";
			} else hide(f);
		});
		resetButton.style.display = "";
	}
	function reset() {
		zoomed = null;
		frames.forEach(function (f) { f.g.style.opacity = ""; place(f, f.x, f.w); });
		resetButton.style.display = "none";
	}
	function search(term) {
		var re, total = 0, covered = [], sum = 0, root = frames[0];
		frames.forEach(function (f) { f.rect.setAttribute("fill", f.fill); });
		matched.textContent = "";
		if (!term) return;
		try { re = new RegExp(term); } catch (e) { matched.textContent = "bad pattern"; return; }
		frames.forEach(function (f) {
			if (!re.test(f.name)) return;
			f.rect.setAttribute("fill", "#e040e0");
			covered.push([f.x, f.x + f.w]);
		});
		// matched share: the union of matching frames' spans, nested matches counted once
		covered.sort(function (a, b) { return a[0] - b[0]; });
		var end = -1;
		covered.forEach(function (c) {
			if (c[0] >= end) { sum += c[1] - c[0]; end = c[1]; }
			else if (c[1] > end) { sum += c[1] - end; end = c[1]; }
		});
		total = root ? root.w : 1;
		matched.textContent = "Matched: " + (100 * sum / total).toFixed(1) + "%";
	}
	function init() {
		var svg = document.documentElement;
		width = +svg.getAttribute("width");
		details = document.getElementById("details");
		matched = document.getElementById("matched");
		resetButton = document.getElementById("reset");
		Array.prototype.forEach.call(document.querySelectorAll("g.f"), function (g) {
			var rect = g.querySelector("rect"), text = g.querySelector("text"), t = g.querySelector("title"),
				title = t ? t.textContent : g.getAttribute("data-t");
			var f = { g: g, rect: rect, text: text, name: title.split("\n")[0], title: title,
				x: +rect.getAttribute("x"), w: +rect.getAttribute("width"),
				y: +rect.getAttribute("y"), fill: rect.getAttribute("fill") };
			frames.push(f);
			g.addEventListener("click", function () { zoom(f); });
			g.addEventListener("mouseover", function () { details.textContent = f.title.replace(/\n/g, "  "); });
			g.addEventListener("mouseout", function () { details.textContent = " "; });
		});
		resetButton.addEventListener("click", reset);
		document.getElementById("search").addEventListener("click", function () {
			search(prompt("Search frames (regular expression)", ""));
		});
		window.addEventListener("keydown", function (e) {
			if (e.key === "Escape") { reset(); search(""); }
			if ((e.ctrlKey || e.metaKey) && e.key === "f") { e.preventDefault(); search(prompt("Search frames (regular expression)", "")); }
		});
	}
	return { init: init, zoom: zoom, reset: reset, search: search };
})();
window.addEventListener("load", FG.init);
