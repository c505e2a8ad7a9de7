import { PostgresSessionStore } from '../../src/session/stores/index.ts';
import { describePostgres, dropSchema, freshSchemaUrl } from '../support/postgres.ts';
import { describeStoreConformance } from './store-conformance.ts';

describePostgres('PostgresSessionStore', (url) => {
  describeStoreConformance('PostgresSessionStore', async (options) => {
    const fresh = freshSchemaUrl(url);
    const store = await PostgresSessionStore.connect({
      url: fresh.url,
      ...(options.pricing !== undefined ? { pricing: options.pricing } : {}),
    });
    return {
      store,
      cleanup: async () => {
        await store.close();
        await dropSchema(url, fresh.schema);
      },
    };
  });
});
