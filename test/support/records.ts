import type { FunctionRef } from '../../activities/contracts';
import type { DatasetRecord } from '../../activities/store/records';

/** An accepted dataset record of `fn` in `runId`, with plain defaults; tests override what they look at. */
export function datasetRecordOf(fn: FunctionRef, runId: string, overrides: Partial<DatasetRecord> = {}): DatasetRecord {
  return {
    func_name: fn.qualname,
    idx: fn.functionId,
    repo_name: fn.repoId,
    func_path: fn.path,
    orig_func: 'def f():\n    return 1\n',
    orig_context: '',
    eval_script: 'def f():\n    return 1\n\ndef test_f():\n    assert f() == f_new_implementation()\n',
    coverage_rate: 1,
    coverage_report: '',
    sandbox_ast_check: true,
    sandbox_functionality_check: null,
    test_correctness_check: 'yes',
    commit_id: fn.commit,
    qualname: fn.qualname,
    function_id: fn.functionId,
    run_id: runId,
    split: fn.split,
    coverage_threshold: 0.8,
    ast_check_required: false,
    license: fn.license,
    license_source: fn.licenseSource ?? null,
    standalone: true,
    packages: [],
    prompt_versions: {},
    debug_rounds: 0,
    coverage_rounds: 0,
    llm_tokens: 0,
    ...overrides,
  };
}
