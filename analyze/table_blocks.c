/* table_blocks.c -- the markdown table's building blocks: a size range in words and a
 * table of one cell kind (table.h) */
#include "../common/units.h"
#include "table.h"

void table_gb_range(uint64_t lo, uint64_t hi, struct strbuf *out)
{
	units_add_size_range(out, (double)lo, (double)hi, UNITS_COARSE);
}

void table_stage_md(const struct table *t, struct strbuf *out, const char *what,
		    void (*cell)(const struct table_cell *, struct strbuf *))
{
	strbuf_addstr(out, "| stage |");
	for (size_t m = 0; m < t->nmodes; m++)
		strbuf_addf(out, " %s, %s |", t->modes[m].name, what);
	strbuf_addstr(out, "\n|---|");
	for (size_t m = 0; m < t->nmodes; m++)
		strbuf_addstr(out, "---|");
	strbuf_addch(out, '\n');
	for (size_t s = 0; s < t->nstages; s++) {
		strbuf_addf(out, "| %s |", t->stages[s]);
		for (size_t m = 0; m < t->nmodes; m++) {
			strbuf_addch(out, ' ');
			cell(table_cell(t, s, m), out);
			strbuf_addstr(out, " |");
		}
		strbuf_addch(out, '\n');
	}
}
