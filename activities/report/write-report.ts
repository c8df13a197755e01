/**
 * Writes a run's report: `report.html` plus, beside it, `report/scripts/<function id>.py` (each
 * accepted record's evaluation script) and `report/exchanges/<function id>.html` (each function's
 * LLM exchanges, accepted or rejected). An exchange that cannot be read is named on its page; it
 * does not stop the report.
 */
import * as path from 'node:path';
import { writeFileAtomic } from '../store/artifacts';
import type { RunReader } from '../dataset/run-reader';
import { renderExchangePage, type ExchangePageInput } from './exchange-page';
import { collectRunReport, type ReportSink } from './report-data';
import { renderRunReport, type ReportLinks } from './report-page';

export const REPORT_FILE = 'report.html';
export const REPORT_ASSETS_DIR = 'report';

export interface WrittenReport {
  file: string;
  records: number;
  rejections: number;
  scripts: number;
  exchangePages: number;
  /** Exchanges listed in the index whose recorded body could not be read. */
  unreadableExchanges: number;
}

const safeName = (id: string) => id.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 200) || '_';

/** Links relative to the page, with `/` separators whatever the platform. */
export const reportLinks: ReportLinks = {
  script: (id) => `${REPORT_ASSETS_DIR}/scripts/${safeName(id)}.py`,
  exchanges: (id) => `${REPORT_ASSETS_DIR}/exchanges/${safeName(id)}.html`,
};

export async function writeRunReport(reader: RunReader, outDir: string): Promise<WrittenReport> {
  const counts = { scripts: 0, exchangePages: 0, unreadableExchanges: 0 };
  const withScript = new Set<string>();
  const sink: ReportSink = {
    async script(functionId, script) {
      await writeFileAtomic(path.join(outDir, reportLinks.script(functionId)), script);
      withScript.add(functionId);
      counts.scripts++;
    },
    async exchanges(functionId, title, entries) {
      const exchanges: ExchangePageInput['exchanges'] = [];
      for (const entry of entries) {
        try {
          exchanges.push({ ok: true, exchange: await reader.exchange(entry.exchangeKey) });
        } catch (err) {
          counts.unreadableExchanges++;
          exchanges.push({ ok: false, key: entry.exchangeKey, error: (err as Error).message });
        }
      }
      // The page sits two folders below the report: report/exchanges/<id>.html.
      const html = renderExchangePage({
        title,
        functionId,
        exchanges,
        backHref: `../../${REPORT_FILE}`,
        scriptHref: withScript.has(functionId) ? `../scripts/${safeName(functionId)}.py` : null,
      });
      await writeFileAtomic(path.join(outDir, reportLinks.exchanges(functionId)), html);
      counts.exchangePages++;
    },
  };
  const data = await collectRunReport(reader, sink);
  const file = path.join(outDir, REPORT_FILE);
  await writeFileAtomic(file, renderRunReport(data, reportLinks));
  return { file, records: data.records.length, rejections: data.rejections.length, ...counts };
}
