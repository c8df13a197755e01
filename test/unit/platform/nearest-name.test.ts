/** Unknown names (a replay stage, a --set key) are refused with the nearest valid one. */
import { REJECTION_STAGES } from '../../../activities/dataset/records';
import { nearestName, unknownNameMessage } from '../../../activities/nearest-name';
import { parseSettingOverrides } from '../../../activities/run-settings';

describe('the nearest valid name', () => {
  it('finds a stage typed with a hyphen or a letter off, and nothing for a word far from all', () => {
    expect(nearestName('test-check', REJECTION_STAGES)).toBe('test_check');
    expect(nearestName('covrage', REJECTION_STAGES)).toBe('coverage');
    expect(nearestName('banana', REJECTION_STAGES)).toBeNull();
    expect(unknownNameMessage('stage', 'banana', ['a', 'b'])).toBe('unknown stage "banana"; one of: a, b');
  });

  it('refuses a --set key the configuration does not have, naming the nearest; takes real keys, parts and renamed ones', () => {
    expect(() => parseSettingOverrides(['loops.debugRound=5'])).toThrow('--set unknown configuration key "loops.debugRound"; did you mean loops.debugRounds?');
    expect(() => parseSettingOverrides(['nothing.like.it=1'])).toThrow(/unknown configuration key "nothing\.like\.it"/);
    expect(parseSettingOverrides(['loops.debugRounds=5', 'crawl.github.trainWindow.from=2024-01-01', 'llm.models.tests=m'])).toEqual({
      loops: { debugRounds: 5 },
      crawl: { github: { trainWindow: { from: '2024-01-01' } } },
      llm: { models: { tests: 'm' } },
    });
    expect(parseSettingOverrides(['llm.prices={"m":{"inputPerMTok":1,"outputPerMTok":2}}'])).toEqual({ llm: { prices: { m: { inputPerMTok: 1, outputPerMTok: 2 } } } });
  });
});
