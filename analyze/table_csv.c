/* table_csv.c -- the per-stage peak table as CSV: three blocks, figures unrounded */
#include <stdio.h>
#include <string.h>

#include "text.h"
#include "table.h"

/* A fourth block, only when runs read device memory (the probe's MPS driver
 * or CUDA reserved figure per stage). */
/* A row's first two fields: "STAGE,MODE" (the cells of every per-stage block). */
static void stage_mode_csv(const struct table *t, size_t s, size_t m, struct strbuf *out)
{
	text_csv(out, t->stages[s]);
	strbuf_addch(out, ',');
	text_csv(out, t->modes[m].name);
}

static void device_csv(const struct table *t, struct strbuf *out)
{
	strbuf_addstr(out, "\nstage,mode,device,device_min_bytes,device_max_bytes,sampled\n");
	for (size_t s = 0; s < t->nstages; s++)
		for (size_t m = 0; m < t->nmodes; m++) {
			const struct table_cell *c = table_cell(t, s, m);
			stage_mode_csv(t, s, m, out);
			strbuf_addch(out, ',');
			text_csv(out, t->device_label);
			if (c->has_device)
				strbuf_addf(out, ",%llu,%llu,%s\n", (unsigned long long)c->device_min,
					    (unsigned long long)c->device_max,
					    c->device_sampled ? "true" : "false");
			else
				strbuf_addstr(out, ",,,\n");
		}
}

/* A block of their own when runs read mapped files: each stage's peak of
 * mapped data files and its major page faults. */
static void mapped_csv(const struct table *t, struct strbuf *out)
{
	strbuf_addstr(out, "\nstage,mode,mapped_min_bytes,mapped_max_bytes,major_faults_min,"
			   "major_faults_max\n");
	for (size_t s = 0; s < t->nstages; s++)
		for (size_t m = 0; m < t->nmodes; m++) {
			const struct table_cell *c = table_cell(t, s, m);
			stage_mode_csv(t, s, m, out);
			if (c->has_mapped)
				strbuf_addf(out, ",%llu,%llu", (unsigned long long)c->mapped_min,
					    (unsigned long long)c->mapped_max);
			else
				strbuf_addstr(out, ",,");
			if (c->has_majflt)
				strbuf_addf(out, ",%llu,%llu\n", (unsigned long long)c->majflt_min,
					    (unsigned long long)c->majflt_max);
			else
				strbuf_addstr(out, ",,\n");
		}
}

void table_render_csv(const struct table *t, struct strbuf *out)
{
	strbuf_addstr(out, "stage,mode,how,code,runs,sampled_runs,from_supplement,peak_min_bytes,peak_max_bytes\n");
	for (size_t s = 0; s < t->nstages; s++)
		for (size_t m = 0; m < t->nmodes; m++) {
			const struct table_cell *c = table_cell(t, s, m);
			const char *sup = c->from_supplement ? "true" : "false";
			if (!c->nentered || c->ncompleted || !c->nendings) {
				stage_mode_csv(t, s, m, out);
				if (!c->nentered)
					strbuf_addf(out, ",not_reached,,0,0,%s,,\n", sup);
				else if (!c->ncompleted)
					strbuf_addf(out, ",no_sample,,%zu,0,%s,,\n", c->nentered, sup);
				else
					strbuf_addf(out, ",completed,,%zu,%zu,%s,%llu,%llu\n", c->ncompleted,
						    c->ncompleted, sup, (unsigned long long)c->min_bytes,
						    (unsigned long long)c->max_bytes);
			}
			for (size_t k = 0; k < c->nendings; k++) {
				const struct table_ending *e = &c->endings[k];
				stage_mode_csv(t, s, m, out);
				strbuf_addf(out, ",%s,", text_outcome_key(e->outcome));
				if (e->outcome == RUN_SIGNAL || e->outcome == RUN_EXIT)
					strbuf_addf(out, "%d", e->code);
				strbuf_addf(out, ",%zu,%zu,%s,", e->nruns, e->nsampled, sup);
				if (e->nsampled)
					strbuf_addf(out, "%llu,%llu", (unsigned long long)e->min_bytes,
						    (unsigned long long)e->max_bytes);
				else
					strbuf_addch(out, ',');
				strbuf_addch(out, '\n');
			}
		}

	strbuf_addstr(out, "\nmode,against,stage,min_less_bytes,max_less_bytes\n");
	for (size_t i = 0; i < t->ncomparisons; i++) {
		const struct table_comparison *c = &t->comparisons[i];
		for (size_t k = 0; k < c->nstages; k++) {
			text_csv(out, t->modes[c->mode].name);
			strbuf_addch(out, ',');
			text_csv(out, t->modes[c->against].name);
			strbuf_addch(out, ',');
			text_csv(out, t->stages[c->stages[k].stage]);
			strbuf_addf(out, ",%lld,%lld\n", (long long)c->stages[k].min_less,
				    (long long)c->stages[k].max_less);
		}
	}

	strbuf_addstr(out, "\nmode,run,path,ran_to,how,code,peak_bytes,swap_rise_bytes,wall_s,"
			   "loads,load_bytes,load_s\n");
	for (size_t m = 0; m < t->nmodes; m++) {
		const struct table_mode *tm = &t->modes[m];
		for (size_t k = 0; k < tm->nruns; k++) {
			const struct analysis *a = &t->runs[tm->runs[k]].a;
			text_csv(out, tm->name);
			strbuf_addf(out, ",%zu,", k + 1);
			text_csv(out, a->path);
			strbuf_addch(out, ',');
			text_csv(out, a->stages[a->ran_to].name);
			strbuf_addf(out, ",%s,", text_outcome_key(a->outcome));
			if (a->outcome == RUN_SIGNAL)
				strbuf_addf(out, "%d", a->signal);
			else if (a->outcome == RUN_EXIT)
				strbuf_addf(out, "%d", a->exit_code);
			strbuf_addch(out, ',');
			if (a->has_footprint)
				strbuf_addf(out, "%llu", (unsigned long long)a->peak_footprint);
			strbuf_addch(out, ',');
			if (a->has_swap)
				strbuf_addf(out, "%llu", (unsigned long long)a->swap_rise);
			strbuf_addch(out, ',');
			text_csv_double(out, a->wall_s);
			strbuf_addf(out, ",%zu,%llu,", a->nloads, (unsigned long long)a->load_bytes);
			text_csv_double(out, a->load_seconds);
			strbuf_addch(out, '\n');
		}
	}

	strbuf_addstr(out, "\nstage,mode,swap_rise_min_bytes,swap_rise_max_bytes,swap_rose\n");
	for (size_t s = 0; s < t->nstages; s++)
		for (size_t m = 0; m < t->nmodes; m++) {
			const struct table_cell *c = table_cell(t, s, m);
			stage_mode_csv(t, s, m, out);
			if (c->has_swap)
				strbuf_addf(out, ",%llu,%llu,%s\n", (unsigned long long)c->swap_min,
					    (unsigned long long)c->swap_max, c->swap_rose ? "true" : "false");
			else
				strbuf_addstr(out, ",,,false\n");
		}
	if (t->has_device)
		device_csv(t, out);
	if (t->has_mapped)
		mapped_csv(t, out);
}
