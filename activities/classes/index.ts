/** The class corpus (OpenClassGen's, from the crawl's sources and snapshots): records, metrics table, summary, sample. */
export { writeClassCorpus, CORPUS_FILES, type CorpusOptions, type CorpusResult, type CorpusRepositorySummary } from './corpus';
export { CLASS_METRICS, type ClassMetricColumn, type MetricGroup } from './metrics';
export { ClassRecordSchema, CLASS_COLUMNS, DOCUMENTATION_LEVELS, classId, classRecord, classSource, type ClassRecord, type DocumentationLevel } from './record';
export { StratifiedSample, sampleRank } from './sample';
export { MetricsSummary, distribution, quantile, type Distribution } from './summary';
export { classifyInput, resolveSource, runRepositories, CorpusInputError, type CorpusInput, type CorpusRepository, type CorpusSource } from './sources';
