// hopper_core_alone: the hopper training core on in-memory arrays, without PostgreSQL.
//
// Reads Fashion-MNIST (idx files, gzipped), packs the training set exactly as hopper.preprocess
// does (the core's shuffled_order with the same seed, plan_buffers' buffer sizes, pixels / 255,
// one-hot classes), and trains each given configuration with hopper::Trainer::train_rows over
// all the buffers, one pass per epoch (rows reshuffled every pass unless --fit says shuffle=False) --
// the same calls hopper.fit makes inside its
// aggregate, minus everything PostgreSQL adds (reading, detoasting and checking the buffers,
// statements, model states going through tables). Then evaluates test accuracy.
//
//   hopper_core_alone --data DIR [--epochs 10] [--compile TEXT]... [--fit TEXT] [--arch JSON]
//                     [--threads 1] [--buffer-size 256] [--seed 1]
// Each --compile adds one model (MADlib form, e.g. "optimizer='SGD(lr=0.01, momentum=0.9)'");
// with several models and --threads T, models are dealt round-robin to T threads that train
// them side by side (what fit_multiple does with T segments). Prints one JSON object:
//   {"epochs":E,"models":M,"threads":T,"params":P,"samples_per_epoch":N,
//    "epoch_seconds":[...],"epoch_cpu_seconds":[...],"seconds":S,"test_accuracy":[...],"test_loss":[...]}
// epoch_seconds[e] is the wall time of epoch e for all models (threads run their share of epoch e
// side by side; the epoch ends when every thread has finished it).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <zlib.h>

#include "hopper/config.h"
#include "hopper/error.h"
#include "hopper/matrix_products.h"
#include "hopper/metrics.h"
#include "hopper/packing.h"
#include "hopper/trainer.h"

namespace {

using Clock = std::chrono::steady_clock;

std::vector<unsigned char> read_gz(const std::string& path) {
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f) throw std::runtime_error("cannot open " + path);
    std::vector<unsigned char> out;
    std::vector<unsigned char> buf(1 << 16);
    int n;
    while ((n = gzread(f, buf.data(), unsigned(buf.size()))) > 0) out.insert(out.end(), buf.begin(), buf.begin() + n);
    gzclose(f);
    if (n < 0) throw std::runtime_error("cannot read " + path);
    return out;
}

uint32_t be32(const unsigned char* p) {
    return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
}

struct DataSet {
    int rows = 0, features = 0, classes = 10;
    std::vector<unsigned char> pixels;  // rows x features, row-major, as in the file
    std::vector<int> label;
    // As hopper.preprocess with normalizing_const => 255 (FeatureScaling::apply).
    void row(int r, float* out) const {
        const float inv = float(1.0 / 255.0);
        for (int j = 0; j < features; ++j) out[j] = float(pixels[std::size_t(r) * features + j]) * inv;
    }
};

DataSet read_idx(const std::string& images_path, const std::string& labels_path) {
    std::vector<unsigned char> images = read_gz(images_path), labels = read_gz(labels_path);
    if (images.size() < 16 || be32(images.data()) != 0x803) throw std::runtime_error("not an idx3 image file");
    if (labels.size() < 8 || be32(labels.data()) != 0x801) throw std::runtime_error("not an idx1 label file");
    DataSet d;
    d.rows = int(be32(images.data() + 4));
    d.features = int(be32(images.data() + 8) * be32(images.data() + 12));
    if (images.size() < 16 + std::size_t(d.rows) * d.features || labels.size() < 8 + std::size_t(d.rows))
        throw std::runtime_error("truncated idx file");
    d.pixels.assign(images.begin() + 16, images.begin() + 16 + std::size_t(d.rows) * d.features);
    d.label.resize(d.rows);
    for (int i = 0; i < d.rows; ++i) d.label[i] = labels[8 + i];
    return d;
}

struct Buffer {
    int rows;
    std::vector<float> x, y;
};

// hopper.preprocess's packing with one segment: rows in shuffled_order(seed), buffers of
// plan_buffers' sizes, one-hot targets.
std::vector<Buffer> pack(const DataSet& d, int buffer_size, uint64_t seed) {
    const std::vector<uint64_t> order = hopper::shuffled_order(uint64_t(d.rows), seed);
    const hopper::BufferPlan plan = hopper::plan_buffers(d.rows, buffer_size, 1);
    std::vector<Buffer> out;
    std::size_t next = 0;
    for (int n : plan.rows) {
        Buffer b;
        b.rows = n;
        b.x.resize(std::size_t(n) * d.features);
        b.y.assign(std::size_t(n) * d.classes, 0.0f);
        for (int i = 0; i < n; ++i) {
            const uint64_t r = order[next + i];
            d.row(int(r), &b.x[std::size_t(i) * d.features]);
            b.y[std::size_t(i) * d.classes + d.label[r]] = 1.0f;
        }
        next += n;
        out.push_back(std::move(b));
    }
    return out;
}

// CPU time of all threads of this process: on a busy machine a better estimate of the quiet
// machine's wall time than the wall time itself.
double process_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

std::string arg_value(int& i, int argc, char** argv) {
    if (i + 1 >= argc) throw std::runtime_error(std::string("missing value for ") + argv[i]);
    return argv[++i];
}

}  // namespace

int main(int argc, char** argv) {
    try {
        std::string data_dir = "/usr/share/datasets/fashion-mnist";
        std::string arch_json =
            R"({"input_dim": 784, "layers": [{"units": 128, "activation": "relu"}, {"units": 10, "activation": "softmax"}]})";
        std::vector<std::string> compiles;
        std::string fit_text = "batch_size=256";
        int epochs = 10, threads = 1, buffer_size = 256;
        uint64_t seed = 1;
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            if (a == "--data") data_dir = arg_value(i, argc, argv);
            else if (a == "--epochs") epochs = std::stoi(arg_value(i, argc, argv));
            else if (a == "--compile") compiles.push_back(arg_value(i, argc, argv));
            else if (a == "--fit") fit_text = arg_value(i, argc, argv);
            else if (a == "--arch") arch_json = arg_value(i, argc, argv);
            else if (a == "--threads") threads = std::stoi(arg_value(i, argc, argv));
            else if (a == "--buffer-size") buffer_size = std::stoi(arg_value(i, argc, argv));
            else if (a == "--seed") seed = std::stoull(arg_value(i, argc, argv));
            else throw std::runtime_error("unknown argument " + a);
        }
        if (compiles.empty())
            compiles.push_back(
                "loss='categorical_crossentropy', optimizer='SGD(lr=0.01, momentum=0.9)', metrics=['accuracy']");
        if (epochs <= 0 || threads <= 0) throw std::runtime_error("--epochs and --threads must be positive");

        std::vector<Buffer> buffers;
        int train_rows = 0;
        {
            // Only the packed buffers stay in memory (as in hopper, where the packed table is the data).
            const DataSet train =
                read_idx(data_dir + "/train-images-idx3-ubyte.gz", data_dir + "/train-labels-idx1-ubyte.gz");
            buffers = pack(train, buffer_size, seed);
            train_rows = train.rows;
        }
        const DataSet test = read_idx(data_dir + "/t10k-images-idx3-ubyte.gz", data_dir + "/t10k-labels-idx1-ubyte.gz");

        std::vector<hopper::Trainer> models;
        for (const std::string& c : compiles) {
            hopper::CompileParams cp = hopper::parse_compile_params(c);
            if (cp.metrics.empty()) cp.metrics.push_back(hopper::Metric::Accuracy);
            models.emplace_back(
                hopper::resolve_config(hopper::parse_architecture(arch_json), cp, hopper::parse_fit_params(fit_text)));
        }
        const int M = int(models.size());
        threads = std::min(threads, M);
        // As the server does before it forks its backends (module.cpp): oneDNN generates its kernels
        // once, so no epoch counts that (~47 ms of this VM's first epoch did: perf, 2026-11-29).
        hopper::warm_up_matrix_products();

        // One pass over every buffer, as train_segment's window makes it with hopper.shuffle_window_mb's
        // default (256 MB holds the 188 MB of Fashion-MNIST): reshuffled rows when fit_params' shuffle
        // is on (the default), the buffers in order when it is off.
        std::vector<hopper::Trainer::RowBlock> blocks;
        for (const Buffer& b : buffers) blocks.push_back({b.x.data(), b.y.data(), b.rows});

        // Thread t trains models t, t+T, ... in every epoch; an epoch ends when all threads are done.
        std::vector<double> epoch_seconds, epoch_cpu;
        const auto started = Clock::now();
        for (int e = 0; e < epochs; ++e) {
            const auto epoch_start = Clock::now();
            const double cpu_start = process_cpu_seconds();
            auto work = [&](int t) {
                for (int m = t; m < M; m += threads) {
                    hopper::Trainer& tr = models[m];
                    tr.begin_visit();
                    tr.train_rows(blocks);
                    tr.finish_visit();
                }
            };
            std::vector<std::thread> pool;
            for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
            work(0);
            for (auto& th : pool) th.join();
            epoch_seconds.push_back(std::chrono::duration<double>(Clock::now() - epoch_start).count());
            epoch_cpu.push_back(process_cpu_seconds() - cpu_start);
        }
        const double seconds = std::chrono::duration<double>(Clock::now() - started).count();

        // Test accuracy, in chunks of 1000 rows.
        std::vector<double> accuracy, loss;
        std::vector<float> tx, ty;
        for (hopper::Trainer& tr : models) {
            hopper::EvalTotals totals;
            hopper::MatrixF scratch;
            for (int start = 0; start < test.rows; start += 1000) {
                const int n = std::min(1000, test.rows - start);
                tx.resize(std::size_t(n) * test.features);
                ty.assign(std::size_t(n) * test.classes, 0.0f);
                for (int i = 0; i < n; ++i) {
                    test.row(start + i, &tx[std::size_t(i) * test.features]);
                    ty[std::size_t(i) * test.classes + test.label[start + i]] = 1.0f;
                }
                hopper::ConstMatrixMap xm(tx.data(), test.features, n);
                hopper::ConstMatrixMap ym(ty.data(), test.classes, n);
                hopper::evaluate_batch(tr.network(), tr.params().data(), xm, ym, tr.config().compile, totals, scratch);
            }
            accuracy.push_back(totals.metric(0));
            loss.push_back(totals.loss());
        }

        auto list = [](const std::vector<double>& v) {
            std::string s = "[";
            for (std::size_t i = 0; i < v.size(); ++i) {
                char buf[64];
                std::snprintf(buf, sizeof buf, "%s%.6g", i ? "," : "", v[i]);
                s += buf;
            }
            return s + "]";
        };
        std::printf(
            "{\"epochs\":%d,\"models\":%d,\"threads\":%d,\"params\":%zu,\"samples_per_epoch\":%d,"
            "\"epoch_seconds\":%s,\"epoch_cpu_seconds\":%s,\"seconds\":%.6f,\"test_accuracy\":%s,\"test_loss\":%s}\n",
            epochs, M, threads, models[0].network().num_params(), train_rows, list(epoch_seconds).c_str(),
            list(epoch_cpu).c_str(), seconds, list(accuracy).c_str(), list(loss).c_str());
        return 0;
    } catch (const hopper::Error& e) {
        std::fprintf(stderr, "hopper_core_alone: %s %s\n", e.message().c_str(), e.detail().c_str());
    } catch (const std::exception& e) { std::fprintf(stderr, "hopper_core_alone: %s\n", e.what()); }
    return 1;
}
