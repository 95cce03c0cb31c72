/* table_readers.c -- which reader read the table's runs: the model's bits and the line
 * that opens the markdown and the verdict */
#include "table.h"

static size_t count_bits(unsigned v)
{
	size_t n = 0;
	for (; v; v &= v - 1)
		n++;
	return n;
}

void table_readers(struct table *t)
{
	t->readers = 0;
	for (size_t m = 0; m < t->nmodes; m++) {
		struct table_mode *tm = &t->modes[m];
		tm->readers = 0;
		for (size_t k = 0; k < tm->nruns; k++) /* a run without figures has no say */
			if (t->runs[tm->runs[k]].a.has_footprint)
				tm->readers |= 1u << t->runs[tm->runs[k]].a.reader;
		if (!tm->readers)
			tm->readers = 1u << SB_READER_UNKNOWN;
		t->readers |= tm->readers;
	}
	t->readers_differ = count_bits(t->readers & ~(1u << SB_READER_UNKNOWN)) > 1;
}

/* "cgroup v1", "cgroup v1 and per-process": the readers of one bit set. */
static void readers_words(unsigned bits, struct strbuf *out)
{
	size_t n = count_bits(bits), k = 0;
	for (int r = 0; r < SB_READER_COUNT; r++) {
		if (!(bits & (1u << r)))
			continue;
		k++;
		strbuf_addf(out, "%s%s", k == 1 ? "" : k == n ? " and " : ", ",
			    reader_info((enum sb_reader)r)->label);
	}
}

void table_readers_md(const struct table *t, struct strbuf *out)
{
	bool same = true;
	for (size_t m = 1; m < t->nmodes; m++)
		same &= t->modes[m].readers == t->modes[0].readers;
	strbuf_addstr(out, "Footprint reader: ");
	if (same && count_bits(t->readers) == 1) {
		readers_words(t->readers, out);
		strbuf_addstr(out, t->nruns == 1 ? " (the run)." : " (every run).");
	} else {
		for (size_t m = 0; m < t->nmodes; m++) {
			strbuf_addf(out, "%s%s: ", m ? "; " : "", t->modes[m].name);
			readers_words(t->modes[m].readers, out);
		}
		strbuf_addch(out, '.');
	}
	if (t->readers_differ)
		strbuf_addstr(out, " The runs were read by different readers: their figures are "
				   "not comparable as they are.");
	for (int r = 0; r < SB_READER_COUNT; r++)
		if ((t->readers & (1u << r)) && reader_caveat((enum sb_reader)r))
			strbuf_addf(out, " %s", reader_caveat((enum sb_reader)r));
	strbuf_addch(out, '\n');
}
