// The usage dashboard's numbers: per key and UTC day, requests, errors by status, rate-limit hits
// and latency percentiles (from the histogram KeyUsage writes).
import { utcDay } from "../../lib/time.ts";
import type { Tx } from "../../store/store.ts";
import { listUserKeys } from "./keyManagement.ts";

/** Upper bounds (ms) of the latency histogram's buckets; the last bucket is everything slower. */
export const LATENCY_BUCKETS_MS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000] as const;

export interface DayUsage {
  day: string;
  requests: number;
  errors: Record<string, number>;
  errorCount: number;
  rateLimited: number;
  /** Upper bounds of the latency buckets holding the percentile, in ms (null: no requests). */
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

export interface KeyReport {
  id: string;
  label: string;
  tokenPrefix: string;
  revoked: boolean;
  days: DayUsage[];
  total: { requests: number; errors: number; rateLimited: number };
}

/** The bucket bound under which `p` of the requests finished (the slowest bucket: twice the last bound). */
export function percentile(histogram: readonly number[], p: number): number | null {
  const total = histogram.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  let seen = 0;
  for (let i = 0; i < histogram.length; i++) {
    seen += histogram[i]!;
    if (seen >= p * total) return LATENCY_BUCKETS_MS[i] ?? LATENCY_BUCKETS_MS.at(-1)! * 2;
  }
  return LATENCY_BUCKETS_MS.at(-1)! * 2;
}

export function lastDays(n: number, now = new Date()): string[] {
  const days: string[] = [];
  for (let i = n - 1; i >= 0; i--) days.push(utcDay(new Date(now.getTime() - i * 86_400_000)));
  return days;
}

export async function usageReport(
  tx: Tx,
  userId: string,
  dayCount = 14,
): Promise<{ days: string[]; keys: KeyReport[] }> {
  const days = lastDays(dayCount);
  const keys = await listUserKeys(tx, userId);
  const rows = await tx.usage.forUser(userId, days[0]!);
  const byKeyDay = new Map(rows.map((r) => [`${r.key_id} ${r.day}`, r]));
  return {
    days,
    keys: keys.map((k) => {
      const perDay = days.map((day): DayUsage => {
        const r = byKeyDay.get(`${k.id} ${day}`);
        const statuses: Record<string, number> = r ? JSON.parse(r.statuses) : {};
        const latency: number[] = r ? JSON.parse(r.latency) : [];
        const errors = Object.fromEntries(Object.entries(statuses).filter(([code]) => Number(code) >= 400));
        return {
          day,
          requests: Number(r?.requests ?? 0),
          errors,
          errorCount: Object.values(errors).reduce((a, b) => a + b, 0),
          rateLimited: Number(r?.rate_limited ?? 0),
          p50: percentile(latency, 0.5),
          p95: percentile(latency, 0.95),
          p99: percentile(latency, 0.99),
        };
      });
      return {
        id: k.id,
        label: k.label,
        tokenPrefix: k.token_prefix,
        revoked: Boolean(k.revoked_at),
        days: perDay,
        total: {
          requests: perDay.reduce((a, d) => a + d.requests, 0),
          errors: perDay.reduce((a, d) => a + d.errorCount, 0),
          rateLimited: perDay.reduce((a, d) => a + d.rateLimited, 0),
        },
      };
    }),
  };
}
