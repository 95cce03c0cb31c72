/* test_html.c -- the pieces of a self-contained page (analyze/html.c): markdown of the
 * renderers' subset as HTML, gnuplot's SVG inlined, the page's head and end */
#include <criterion/criterion.h>
#include <string.h>

#include "analyze/html.h"
#include "common/util.h"

static char *md(const char *in, int shift)
{
	struct strbuf sb = STRBUF_INIT;
	html_md(&sb, in, shift);
	return strbuf_detach(&sb);
}

Test(html, markdown_table_has_a_header_row_and_escaped_cells)
{
	char *h = md("| stage | eager, peak |\n|---|---|\n| a\\|b | 1 GB |\n| <script> | 2 GB |\n", 1);
	cr_assert_str_eq(h, "<table>\n<thead><tr><th scope=\"col\">stage</th><th scope=\"col\">"
			    "eager, peak</th></tr>\n</thead><tbody>\n"
			    "<tr><td>a|b</td><td>1 GB</td></tr>\n"
			    "<tr><td>&lt;script&gt;</td><td>2 GB</td></tr>\n</tbody></table>\n");
	free(h);
}

Test(html, headings_shift_lists_and_paragraphs)
{
	char *h = md("# Latents: 2 runs\n\nfirst line\nsecond <b>\n\n- one\n- two & three\n"
		     "###### deep\n", 2);
	cr_assert_str_eq(h, "<h3>Latents: 2 runs</h3>\n<p>first line<br>\nsecond &lt;b&gt;</p>\n"
			    "<ul>\n<li>one</li>\n<li>two &amp; three</li>\n</ul>\n<h6>deep</h6>\n");
	free(h);
	h = md(NULL, 0);
	cr_assert_str_eq(h, "");
	free(h);
}

static const char gp_svg[] =
	"<?xml version=\"1.0\" encoding=\"utf-8\"  standalone=\"no\"?>\n"
	"<svg \n width=\"900\" height=\"500\"\n viewBox=\"0 0 900 500\"\n"
	" xmlns=\"http://www.w3.org/2000/svg\"\n>\n\n<title>Gnuplot</title>\n"
	"<desc>Produced by GNUPLOT 5.4 patchlevel 4 </desc>\n\n<g id=\"gnuplot_canvas\">\n"
	"<defs><circle id='gpDot' r='0.5'/><use xlink:href='#gpDot' id='gpPt6'/></defs>\n"
	"<g id=\"gnuplot_plot_1a\" ><title>gnuplot_plot_1a</title>\n"
	"<text>a&lt;script>x</text><rect fill=\"url(#gpPat1)\"/></g>\n</g>\n</svg>\n";

Test(html, gnuplot_svg_inlined_with_our_names_and_prefixed_ids)
{
	struct strbuf sb = STRBUF_INIT;
	cr_assert_eq(html_svg(&sb, gp_svg, strlen(gp_svg), "memory", "Memory <over> time",
			      "Stages: a, b"), 0);
	const char *h = sb.buf;
	cr_assert_null(strstr(h, "<?xml"));
	cr_assert_null(strstr(h, "Gnuplot</title>"));
	cr_assert_null(strstr(h, "Produced by"));
	cr_assert_null(strstr(h, "<title>gnuplot_plot_1a</title>"));
	cr_assert_not_null(strstr(h, "<figure id=\"chart-memory\">\n<svg role=\"img\" "
				     "aria-label=\"Memory &lt;over&gt; time\" \n width=\"900\""));
	cr_assert_not_null(strstr(h, "<title>Memory &lt;over&gt; time</title>\n"
				     "<desc>Stages: a, b</desc>\n"));
	cr_assert_not_null(strstr(h, "<g id=\"memory-gnuplot_canvas\">"));
	cr_assert_not_null(strstr(h, "<circle id='memory-gpDot'"));
	cr_assert_not_null(strstr(h, "xlink:href='#memory-gpDot' id='memory-gpPt6'"));
	cr_assert_not_null(strstr(h, "fill=\"url(#memory-gpPat1)\""));
	cr_assert_not_null(strstr(h, "<text>a&lt;script>x</text>"));
	cr_assert_not_null(strstr(h, "<figcaption>Memory &lt;over&gt; time</figcaption>\n</figure>\n"));
	strbuf_release(&sb);
}

Test(html, svg_with_a_script_or_no_svg_is_refused)
{
	static const char *const bad[] = {
		"<svg width=\"1\"><SCRIPT>alert(1)</SCRIPT></svg>",
		"<svg width=\"1\"><foreignObject><p>x</p></foreignObject></svg>",
		"<html><body>not a chart</body></html>",
		"",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct strbuf sb = STRBUF_INIT;
		cr_assert_eq(html_svg(&sb, bad[i], strlen(bad[i]), "c", "t", "d"), -1, "%s", bad[i]);
		cr_assert_eq(sb.len, 0);
		strbuf_release(&sb);
	}
}

Test(html, page_is_self_contained)
{
	struct strbuf sb = STRBUF_INIT;
	html_begin(&sb, "stagebench: <eager> against \"staged\"");
	html_heading(&sb, 2, "Verdict", "verdict");
	html_para(&sb, "a < b", "warn");
	html_end(&sb);
	const char *h = sb.buf;
	cr_assert(!strncmp(h, "<!DOCTYPE html>\n<html lang=\"en\">", 31));
	cr_assert_not_null(strstr(h, "<title>stagebench: &lt;eager&gt; against &quot;staged&quot;</title>"));
	cr_assert_not_null(strstr(h, "content=\"default-src 'none'; style-src 'unsafe-inline'\""));
	cr_assert_not_null(strstr(h, "<h2 id=\"verdict\">Verdict</h2>\n<p class=\"warn\">a &lt; b</p>"));
	cr_assert_null(strstr(h, "http://"));
	cr_assert_null(strstr(h, "https://"));
	cr_assert_null(strstr(h, "<script"));
	cr_assert_null(strstr(h, "<link"));
	cr_assert_null(strstr(h, "url("));
	cr_assert(str_ends_with(h, "</body>\n</html>\n"));
	strbuf_release(&sb);
}
