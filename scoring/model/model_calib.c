/*
 * model_calib.c - the calibration of a model's raw score into a
 * probability: Platt scaling or isotonic regression, fit on the
 * calibration slice, and the calibration slice's metrics.
 */
#include <math.h>
#include <stdlib.h>

#include "scoring/model/metrics.h"
#include "scoring/model/model_int.h"

#define P_EPS 1e-6

/* ---- calibration ------------------------------------------------------- */

static double sigmoid(double x)
{
	if (x >= 0)
		return 1.0 / (1.0 + exp(-x));
	return exp(x) / (1.0 + exp(x));
}

/* Platt scaling, the Lin, Lin and Weng (2007) Newton method. */
static void platt_fit(double *a_out, double *b_out, const double *f,
		      const int *y, size_t n)
{
	double prior1 = 0, prior0 = 0, hi, lo, A, B, fval = 0;
	size_t i;
	int it;

	for (i = 0; i < n; i++) {
		if (y[i])
			prior1++;
		else
			prior0++;
	}
	hi = (prior1 + 1) / (prior1 + 2);
	lo = 1 / (prior0 + 2);
	A = 0;
	B = log((prior0 + 1) / (prior1 + 1));
	for (i = 0; i < n; i++) {
		double t = y[i] ? hi : lo, z = f[i] * A + B;

		fval += z >= 0 ? t * z + log1p(exp(-z))
			       : (t - 1) * z + log1p(exp(z));
	}
	for (it = 0; it < 100; it++) {
		double h11 = 1e-12, h22 = 1e-12, h21 = 0, g1 = 0, g2 = 0;
		double det, dA, dB, gd, step;

		for (i = 0; i < n; i++) {
			double t = y[i] ? hi : lo, z = f[i] * A + B, p, q;

			if (z >= 0) {
				p = exp(-z) / (1 + exp(-z));
				q = 1 / (1 + exp(-z));
			} else {
				p = 1 / (1 + exp(z));
				q = exp(z) / (1 + exp(z));
			}
			h11 += f[i] * f[i] * p * q;
			h22 += p * q;
			h21 += f[i] * p * q;
			g1 += f[i] * (t - p);
			g2 += t - p;
		}
		if (fabs(g1) < 1e-5 && fabs(g2) < 1e-5)
			break;
		det = h11 * h22 - h21 * h21;
		dA = -(h22 * g1 - h21 * g2) / det;
		dB = -(-h21 * g1 + h11 * g2) / det;
		gd = g1 * dA + g2 * dB;
		for (step = 1; step >= 1e-10; step /= 2) {
			double nA = A + step * dA, nB = B + step * dB, nf = 0;

			for (i = 0; i < n; i++) {
				double t = y[i] ? hi : lo, z = f[i] * nA + nB;

				nf += z >= 0 ? t * z + log1p(exp(-z))
					     : (t - 1) * z + log1p(exp(z));
			}
			if (nf < fval + 0.0001 * step * gd) {
				A = nA;
				B = nB;
				fval = nf;
				break;
			}
		}
		if (step < 1e-10)
			break;
	}
	*a_out = A;
	*b_out = B;
}

/* Isotonic regression by pool-adjacent-violators; blocks kept as points. */
static int isotonic_fit(struct pt_model *m, const double *f, const int *y,
			size_t n)
{
	size_t *idx, i, nb = 0;
	double *bx, *by, *bw;
	int rc = PT_ENOMEM;

	idx = pt_calloc(n, sizeof(*idx));
	bx = pt_calloc(n, sizeof(*bx));
	by = pt_calloc(n, sizeof(*by));
	bw = pt_calloc(n, sizeof(*bw));
	if (!idx || !bx || !by || !bw)
		goto out;
	metrics_order(idx, f, NULL, n);
	/* ascending by score: walk the descending order backwards */
	for (i = n; i-- > 0;) {
		size_t r = idx[i];

		if (nb && bx[nb - 1] == f[r]) {
			/* a tie joins the block of equal score */
			by[nb - 1] = (by[nb - 1] * bw[nb - 1] + y[r]) /
				     (bw[nb - 1] + 1);
			bw[nb - 1] += 1;
		} else {
			bx[nb] = f[r];
			by[nb] = y[r];
			bw[nb++] = 1;
		}
		while (nb > 1 && by[nb - 2] >= by[nb - 1]) {
			double w = bw[nb - 2] + bw[nb - 1];

			bx[nb - 2] = (bx[nb - 2] * bw[nb - 2] +
				      bx[nb - 1] * bw[nb - 1]) /
				     w;
			by[nb - 2] = (by[nb - 2] * bw[nb - 2] +
				      by[nb - 1] * bw[nb - 1]) /
				     w;
			bw[nb - 2] = w;
			nb--;
		}
	}
	m->iso_x = bx;
	m->iso_y = by;
	m->niso = nb;
	bx = by = NULL;
	rc = 0;
out:
	free(idx);
	free(bx);
	free(by);
	free(bw);
	return rc;
}

double model_calibrate(const struct pt_model *m, double f)
{
	double p;

	if (m->calib == MODEL_CALIB_PLATT) {
		p = sigmoid(-(m->platt_a * f + m->platt_b));
	} else if (!m->niso) {
		p = sigmoid(f);
	} else if (f <= m->iso_x[0]) {
		p = m->iso_y[0];
	} else if (f >= m->iso_x[m->niso - 1]) {
		p = m->iso_y[m->niso - 1];
	} else {
		size_t lo = 0, hi = m->niso - 1;

		while (hi - lo > 1) {
			size_t mid = (lo + hi) / 2;

			if (m->iso_x[mid] <= f)
				lo = mid;
			else
				hi = mid;
		}
		p = m->iso_y[lo] + (m->iso_y[hi] - m->iso_y[lo]) *
					   (f - m->iso_x[lo]) /
					   (m->iso_x[hi] - m->iso_x[lo]);
	}
	if (p < P_EPS)
		p = P_EPS;
	if (p > 1 - P_EPS)
		p = 1 - P_EPS;
	return p;
}

int model_fit_calibration(struct pt_model *m, const double *f, const int *y,
			  size_t n)
{
	if (m->calib == MODEL_CALIB_ISOTONIC)
		return isotonic_fit(m, f, y, n);
	platt_fit(&m->platt_a, &m->platt_b, f, y, n);
	return 0;
}

int model_calib_metrics(struct pt_model *m, const double *f, const int *y,
			size_t n)
{
	double *pc = pt_calloc(n, sizeof(*pc));
	size_t i;
	int rc;

	if (!pc)
		return PT_ENOMEM;
	for (i = 0; i < n; i++)
		pc[i] = model_calibrate(m, f[i]);
	rc = model_set_metric(m, "cal_auc", metrics_roc_auc(f, y, n));
	if (!rc)
		rc = model_set_metric(m, "cal_brier", metrics_brier(pc, y, n));
	if (!rc)
		rc = model_set_metric(m, "cal_ece",
				      metrics_ece(pc, y, n, METRICS_ECE_BINS));
	free(pc);
	return rc;
}
