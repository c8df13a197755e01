/**
 * Licenses of local sources, read from their license file: the text match against the SPDX
 * reference texts, the choice among several files, and a tree's untrusted files (symlinks, sizes,
 * folders named like a license file).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { COMMON_LICENSES, detectLicense, isLicenseFileName, licenseAllowed, matchLicenseText, MAX_LICENSE_FILE_BYTES, repositoryLicense } from '../../../activities/sources/license';

const ROOT = path.resolve(__dirname, '../../..');
const spdxText = (id: string) => (require(`spdx-license-list/licenses/${id}.json`) as { licenseText: string }).licenseText;
/** A reference text as a project would ship it: the placeholders filled in. */
const shipped = (id: string) => spdxText(id).replace(/<year>/g, '2024').replace(/<(copyright holders?|owner|name of author|organization)>/gi, 'Jane Doe');

const MIT_MARKDOWN = `# The MIT Licence

Copyright © 2023-2024 Jane Doe and contributors

Permission is hereby granted, free of charge, to any person obtaining a copy of this software and
associated documentation files (the "Software"), to deal in the Software without restriction,
including without limitation the rights to use, copy, modify, merge, publish, distribute,
sublicense, and/or sell copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all copies or
substantial portions of the Software.

**THE SOFTWARE IS PROVIDED "AS IS"**, WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT
NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES
OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN
CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
`;

function tree(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-license-'));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

describe('matching a license text', () => {
  it.each(Object.entries(COMMON_LICENSES))('%s from its SPDX text as shipped', (key, spdx) => {
    expect(matchLicenseText(shipped(spdx))?.license).toBe(key);
  });

  it('reads the forms projects write: markdown, another spelling, copyright lines of their own', () => {
    expect(matchLicenseText(MIT_MARKDOWN)).toMatchObject({ license: 'mit' });
    // Apache 2.0 without its appendix on how to apply it (many LICENSE files stop before it).
    const apache = shipped('Apache-2.0');
    expect(matchLicenseText(apache.slice(0, apache.indexOf('APPENDIX')))?.license).toBe('apache-2.0');
    // BSD 3-Clause naming the organisation in its third clause.
    expect(matchLicenseText(shipped('BSD-3-Clause').replace(/the copyright holder/i, 'Acme Widgets Incorporated'))?.license).toBe('bsd-3-clause');
  });

  it('tells close licenses apart: BSD 2 and 3 clauses, ISC and 0BSD, the GPL family', () => {
    expect(matchLicenseText(shipped('BSD-2-Clause'))?.license).toBe('bsd-2-clause');
    expect(matchLicenseText(shipped('0BSD'))?.license).toBe('0bsd');
    expect(matchLicenseText(shipped('AGPL-3.0-only'))?.license).toBe('agpl-3.0');
    expect(matchLicenseText(shipped('LGPL-2.1-only'))?.license).toBe('lgpl-2.1');
  });

  it('claims nothing for a text that is not a common license', () => {
    // MIT with a restriction added is not MIT.
    const restricted = `${MIT_MARKDOWN}\nThe Software is provided to you by the Licensor under the License, as defined below, subject to the following condition. Without limiting other conditions in the License, the grant of rights under the License will not include, and the License does not grant to you, the right to Sell the Software. For purposes of the foregoing, Sell means practicing any or all of the rights granted to you under the License to provide to third parties, for a fee or other consideration (including without limitation fees for hosting or consulting/ support services related to the Software), a product or service whose value derives, entirely or substantially, from the functionality of the Software.\n`;
    expect(matchLicenseText(restricted)).toBeNull();
    expect(matchLicenseText('This project is MIT licensed. See the website for details.')).toBeNull();
    expect(matchLicenseText('All rights reserved. No part of this code may be copied.')).toBeNull();
    expect(matchLicenseText('')).toBeNull();
  });
});

describe('the license file of a folder', () => {
  it('the demo repository: MIT, from its LICENSE', async () => {
    expect(await detectLicense(path.join(ROOT, 'scripts/demo/example-repo'))).toEqual({ license: 'mit', source: 'file:LICENSE' });
  });

  it('the fixture repositories have none', async () => {
    for (const name of ['mlkit', 'shop', 'webapp', 'scripts_repo']) {
      expect(await detectLicense(path.join(ROOT, 'test/fixtures/repos', name))).toEqual({ license: null, source: 'none' });
    }
  });

  it.each([
    [{ 'LICENSE.md': MIT_MARKDOWN }, { license: 'mit', source: 'file:LICENSE.md' }],
    [{ 'LICENCE.txt': shipped('Apache-2.0') }, { license: 'apache-2.0', source: 'file:LICENCE.txt' }],
    [{ COPYING: shipped('GPL-2.0-only') }, { license: 'gpl-2.0', source: 'file:COPYING' }],
    [{ UNLICENSE: shipped('Unlicense') }, { license: 'unlicense', source: 'file:UNLICENSE' }],
    // An LGPL project ships the GPL too: COPYING.LESSER says which license it is.
    [{ COPYING: shipped('GPL-3.0-only'), 'COPYING.LESSER': shipped('LGPL-3.0-only').split(/\nGNU GENERAL PUBLIC LICENSE\s+Version 3/)[0]! }, { license: 'lgpl-3.0', source: 'file:COPYING.LESSER' }],
    // Several files: LICENSE before a suffixed one; a file that states nothing known is passed over.
    [{ LICENSE: 'See LICENSE-MIT and LICENSE-APACHE.', 'LICENSE-MIT': MIT_MARKDOWN, 'LICENSE-APACHE': shipped('Apache-2.0') }, { license: 'apache-2.0', source: 'file:LICENSE-APACHE' }],
    [{ 'README.md': MIT_MARKDOWN, 'docs/LICENSE': MIT_MARKDOWN }, { license: null, source: 'none' }],
  ] as const)('%o', async (files, expected) => {
    expect(await detectLicense(tree(files))).toEqual(expected);
  });

  it('reads only regular files in the folder itself: no symlink, no folder, nothing over the size bound', async () => {
    const outside = tree({ 'MIT.txt': MIT_MARKDOWN });
    const dir = tree({});
    fs.symlinkSync(path.join(outside, 'MIT.txt'), path.join(dir, 'LICENSE'));
    fs.mkdirSync(path.join(dir, 'COPYING'));
    fs.writeFileSync(path.join(dir, 'LICENSE.txt'), MIT_MARKDOWN + ' '.repeat(MAX_LICENSE_FILE_BYTES));
    fs.writeFileSync(path.join(dir, 'LICENCE'), Buffer.from([0, 255, 254, 0, 7]));
    expect(await detectLicense(dir)).toEqual({ license: null, source: 'none' });
    expect(await detectLicense(path.join(dir, 'no-such-folder'))).toEqual({ license: null, source: 'none' });
  });

  it('knows license file names, and only those', () => {
    for (const n of ['LICENSE', 'license.md', 'LICENCE.txt', 'COPYING', 'COPYING.LESSER', 'UNLICENSE', 'LICENSE-MIT', 'LICENSES.rst']) expect(isLicenseFileName(n)).toBe(true);
    for (const n of ['README.md', 'license.py', 'LICENSE/../../etc', 'my-license', 'COPYRIGHT', `LICENSE-${'x'.repeat(40)}`]) expect(isLicenseFileName(n)).toBe(false);
  });

  it("a GitHub repository: the API's license when it names one, else its tarball's license file", async () => {
    const dir = tree({ LICENSE: MIT_MARKDOWN });
    expect(await repositoryLicense('apache-2.0', dir)).toEqual({ license: 'apache-2.0', source: 'github-api' });
    for (const unnamed of [null, 'other', 'NOASSERTION']) expect(await repositoryLicense(unnamed, dir)).toEqual({ license: 'mit', source: 'file:LICENSE' });
    expect(await repositoryLicense('other', tree({}))).toEqual({ license: null, source: 'none' });
  });

  it('compares with crawl.github.licenses as GitHub keys, in any case', () => {
    expect(licenseAllowed('mit', ['MIT', 'apache-2.0'])).toBe(true);
    expect(licenseAllowed('gpl-3.0', ['mit'])).toBe(false);
    expect(licenseAllowed(null, ['mit'])).toBe(false);
  });
});
