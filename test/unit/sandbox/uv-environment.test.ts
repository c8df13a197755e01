import { uvEnvironment } from '../../../activities/sandbox/uv';

test('uv gets PATH, its cache, the CA bundle and proxies, and nothing else of the worker’s environment', () => {
  const env = uvEnvironment({
    cacheDir: '/store/uv-cache',
    home: '/store/.uv-home',
    env: {
      PATH: '/usr/bin:/bin',
      HTTPS_PROXY: 'http://proxy:3128',
      SSL_CERT_FILE: '/etc/ssl/certs/ca-certificates.crt',
      OPENAI_API_KEY: 'sk-secret',
      GITHUB_TOKEN: 'ghp-secret',
      DOCKER_HOST: 'unix:///var/run/docker.sock',
      REPOST_STORE_URL: 'postgres://user:pw@db/repost',
      PIP_INDEX_URL: 'https://mirror/simple',
      UV_INDEX_URL: 'https://mirror/simple',
      PYTHONPATH: '/somewhere',
    },
  });
  expect(Object.keys(env).sort()).toEqual(['HOME', 'HTTPS_PROXY', 'NO_COLOR', 'PATH', 'SSL_CERT_FILE', 'UV_CACHE_DIR', 'UV_NO_CONFIG', 'UV_NO_PROGRESS', 'UV_PYTHON_DOWNLOADS']);
  expect(env).toMatchObject({ UV_CACHE_DIR: '/store/uv-cache', UV_NO_CONFIG: '1', UV_PYTHON_DOWNLOADS: 'never' });
});
