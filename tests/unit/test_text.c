/* test_text.c -- the escaping every output format shares (analyze/text.c) */
#include <criterion/criterion.h>
#include <string.h>

#include "analyze/text.h"
#include "common/util.h"

typedef void (*escape_fn)(struct strbuf *out, const char *s);

static void expect(escape_fn fn, const char *in, const char *want)
{
	struct strbuf sb = STRBUF_INIT;
	fn(&sb, in);
	cr_assert_str_eq(strbuf_str(&sb), want, "in: '%s'", in);
	strbuf_release(&sb);
}

Test(text, markdown_cells_escape_pipes_and_controls)
{
	expect(text_md, "a|b\nc\x1b[1m\t", "a\\|b\\nc\\x1b[1m\\t");
	expect(text_md, NULL, "");
}

Test(text, terminal_text_escapes_controls_only)
{
	expect(text_term, "a|b\r\n\x7f", "a|b\\r\\n\\x7f");
}

Test(text, csv_fields_are_quoted_when_they_must_be)
{
	expect(text_csv, "plain name", "plain name");
	expect(text_csv, "a,\"b\"", "\"a,\"\"b\"\"\"");
	expect(text_csv, "two\nlines", "\"two\nlines\"");
	struct strbuf sb = STRBUF_INIT;
	text_csv_double(&sb, 0.1);
	strbuf_addch(&sb, ',');
	text_csv_double(&sb, 1.0 / 3);
	strbuf_addch(&sb, ',');
	text_csv_double(&sb, 12.5);
	cr_assert_str_eq(strbuf_str(&sb), "0.1,0.3333333333333333,12.5");
	strbuf_release(&sb);
}

Test(text, xml_keeps_the_document_well_formed)
{
	expect(text_xml, "<a & 'b'>\"", "&lt;a &amp; &apos;b&apos;&gt;&quot;");
	expect(text_xml, "t\tn\nr\r", "t&#x9;n&#xA;r&#xD;");
	/* forbidden controls, a stray byte, a surrogate, U+FFFE: '?'; UTF-8 kept */
	expect(text_xml, "\x01|\xff|\xed\xa0\x80|\xef\xbf\xbe|\xc3\xa9", "?|?|?|?|\xc3\xa9");
}

Test(text, html_text_opens_no_element_and_ends_no_attribute)
{
	expect(text_html, "<script>alert(\"x\")</script>", "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
	expect(text_html, "a'b&c>", "a&#39;b&amp;c&gt;");
	expect(text_html, "two\nlines\x1b[1m", "two\\nlines\\x1b[1m");
	expect(text_html, "caf\xc3\xa9 \xff!", "caf\xc3\xa9 \xef\xbf\xbd!"); /* a byte not UTF-8 */
	expect(text_html, NULL, "");
}

Test(text, github_commands_cannot_be_started_by_a_message)
{
	expect(text_github, "50% done\r\n::error::x", "50%25 done%0D%0A::error::x");
}

Test(text, outcome_keys)
{
	cr_assert_str_eq(text_outcome_key(RUN_COMPLETED), "completed");
	cr_assert_str_eq(text_outcome_key(RUN_GUARD), "guard");
	cr_assert_str_eq(text_outcome_key(RUN_SIGNAL), "signal");
}
