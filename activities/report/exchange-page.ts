/**
 * One function's LLM exchanges as a page of its own: every call in order, with what was asked
 * (each message), what came back (or the error), the model, tokens, cost and latency.
 */
import type { ExchangeView } from '../dataset/run-reader';
import { escapeXml as esc, formatNumber } from './charts';

const CSS = `
body{font-family:system-ui,sans-serif;margin:0 auto;max-width:1000px;padding:16px 24px;color:#222}
section{border:1px solid #ddd;border-radius:6px;margin:16px 0;padding:8px 14px}
h2{font-size:1.1em;margin:4px 0}.muted{color:#666}
pre{white-space:pre-wrap;word-break:break-word;background:#f7f7f7;padding:8px;border-radius:4px;font-size:12px}
.error{color:#a00}
`;

export interface ExchangePageInput {
  title: string;
  functionId: string;
  /** The exchanges in order, or why one could not be read. */
  exchanges: ({ ok: true; exchange: ExchangeView } | { ok: false; key: string; error: string })[];
  backHref: string;
  scriptHref: string | null;
}

function exchangeSection(e: ExchangeView, n: number): string {
  const meta = [
    `model <code>${esc(e.request.model)}</code>`,
    e.promptId ? `prompt <code>${esc(e.promptId)}@${esc(e.promptVersion ?? '?')}</code>` : '',
    `attempt ${e.attempt}`,
    `${formatNumber(e.usage.promptTokens)} + ${formatNumber(e.usage.completionTokens)} tokens${e.usage.estimated ? ' (estimated)' : ''}`,
    `$${e.costUsd.toFixed(6)}`,
    `${e.latencyMs} ms`,
    e.cached ? 'answered from the cache' : '',
    e.refusedBy?.length ? `<span class="error">refused by ${e.refusedBy.map((c) => `<code>${esc(c)}</code>`).join(', ')}</span>` : '',
    esc(e.recordedAt),
  ].filter(Boolean);
  const messages = e.request.messages.map((m) => `<details${m.role === 'user' ? ' open' : ''}><summary>${esc(m.role)}</summary><pre>${esc(m.content)}</pre></details>`).join('');
  const answer = e.response
    ? `<h3>answer${e.response.finishReason ? ` <span class="muted">(${esc(e.response.finishReason)})</span>` : ''}</h3><pre>${esc(e.response.text)}</pre>`
    : `<p class="error">no answer: ${esc(e.error ? `${e.error.kind}: ${e.error.message}` : 'unknown error')}</p>`;
  return `<section class="exchange"><h2>${n}. ${esc(e.step)}</h2><p class="muted">${meta.join(' · ')}</p>${messages}${answer}</section>`;
}

export function renderExchangePage(input: ExchangePageInput): string {
  const body = input.exchanges.length
    ? input.exchanges.map((x, i) => (x.ok ? exchangeSection(x.exchange, i + 1) : `<section class="exchange error">${i + 1}. exchange ${esc(x.key)} cannot be read: ${esc(x.error)}</section>`)).join('\n')
    : '<p class="muted">No exchange is recorded for this function in this run.</p>';
  const links = [`<a href="${esc(input.backHref)}">back to the report</a>`, input.scriptHref ? `<a href="${esc(input.scriptHref)}">eval script</a>` : ''].filter(Boolean).join(' · ');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>LLM exchanges: ${esc(input.title)}</title><style>${CSS}</style></head>
<body><h1>LLM exchanges</h1><p><code>${esc(input.title)}</code> <span class="muted">(${esc(input.functionId)})</span></p><p>${links}</p>
${body}
</body></html>
`;
}
