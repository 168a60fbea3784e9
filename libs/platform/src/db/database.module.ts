import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { createDatabaseHandle, DATABASE, type DatabaseHandle } from './database.js';
import { runMigrations } from './migrate.js';
import { TransactionHost } from './transaction-host.js';

@Global()
@Module({
  providers: [
    {
      provide: DATABASE,
      inject: [APP_CONFIG],
      useFactory: async (config: AppConfig) => {
        const handle = await createDatabaseHandle({
          databaseUrl: config.databaseUrl,
          dataDir: config.dataDir,
          poolMax: config.databasePoolMax,
        });
        await runMigrations(handle);
        return handle;
      },
    },
    TransactionHost,
  ],
  exports: [DATABASE, TransactionHost],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(@Inject(DATABASE) private readonly handle: DatabaseHandle) {}

  async onApplicationShutdown(): Promise<void> {
    await this.handle.close();
  }
}
