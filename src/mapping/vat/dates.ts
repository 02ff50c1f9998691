import type { ReportingPeriod } from '../vat-settings.js';

/** Dates of a VAT submission: invoice_date and reporting_period (docs/vat.md, "Dates and reporting periods"). PURE. */

/** YYYY-MM-DD `days` after `date` (UTC calendar arithmetic). */
export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** The reporting period containing `date`: its first and last day. */
export function reportingPeriodRange(date: string, period: ReportingPeriod): { start: string; end: string } {
  const [year, month] = date.split('-') as [string, string];
  const m = Number(month);
  const first = period === 'monthly' ? m : Math.floor((m - 1) / 3) * 3 + 1;
  const start = `${year}-${String(first).padStart(2, '0')}-01`;
  const next = period === 'monthly' ? first + 1 : first + 3;
  const end = next > 12 ? `${year}-12-31` : addDays(`${year}-${String(next).padStart(2, '0')}-01`, -1);
  return { start, end };
}

/** reporting_period: the first day of the (monthly or quarterly) period containing `date`. */
export function reportingPeriod(date: string, period: ReportingPeriod): string {
  return reportingPeriodRange(date, period).start;
}

/** invoice_date: the date of issued_at as written, in the document's own offset (no shift to UTC). */
export const invoiceDate = (issuedAt: string): string => issuedAt.slice(0, 10);
