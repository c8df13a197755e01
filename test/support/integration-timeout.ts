// Integration tests run real containers and workflows; their budget is minutes, not seconds.
jest.setTimeout(300_000);
